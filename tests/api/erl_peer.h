/* SPDX-License-Identifier: MIT */
/*
 * erl_peer.h - an `erl` peer node for the distribution suites
 * (test_dist.c, test_dist_gen.c): started with a program (-eval) and a
 * cookie, its stdout read line by line, killed at the end. Test code
 * only; include after harness.h.
 */
#ifndef SMARM_TEST_ERL_PEER_H
#define SMARM_TEST_ERL_PEER_H

#include "harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct peer {
	pid_t pid;
	int in_fd;  /* its stdin: closing it halts it */
	int out_fd; /* its stdout */
	char name[64];
};

static void peer_stop(struct peer *p)
{
	if (p->pid <= 0)
		return;
	close(p->in_fd);
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	close(p->out_fd);
	p->pid = 0;
}

/* Start erl as sname with cookie running eval (everything is prepared
 * before the fork: the child only execs). Returns false if it could not
 * be started. */
static bool peer_spawn(struct peer *p, const char *sname, const char *cookie,
		       const char *eval, const char *ticktime)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
		return false;
	snprintf(p->name, sizeof p->name, "%s", sname);
	p->pid = fork();
	if (p->pid < 0)
		return false;
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (ticktime != NULL)
			execlp("erl", "erl", "-sname", sname, "-setcookie",
			       cookie, "-noshell", "-kernel", "net_ticktime",
			       ticktime, "-eval", eval, (char *)NULL);
		else
			execlp("erl", "erl", "-sname", sname, "-setcookie",
			       cookie, "-noshell", "-eval", eval, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in_fd = in[1];
	p->out_fd = out[0];
	return true;
}

/*
 * Read the peer's stdout until a line starting with prefix, for at most
 * 120 s (scaled); the line goes into line. From a plain thread (poll),
 * or from an actor (smarm_io_wait_readable_timeout).
 */
static bool peer_await(struct peer *p, const char *prefix, char *line,
		       size_t cap)
{
	size_t have = 0;
	uint64_t deadline =
		smarm_now_ns() + (uint64_t)(120e9 * harness_time_scale());
	char buf[4096];
	for (;;) {
		char *nl;
		buf[have] = '\0';
		while ((nl = strchr(buf, '\n')) != NULL) {
			*nl = '\0';
			bool hit = strncmp(buf, prefix, strlen(prefix)) == 0;
			if (hit)
				harness_copy(line, cap, buf);
			size_t used = (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have - used + 1);
			have -= used;
			if (hit)
				return true;
		}
		uint64_t now = smarm_now_ns();
		if (now >= deadline || have + 1 >= sizeof buf)
			return false;
		if (smarm_actor_self().id != 0) {
			fcntl(p->out_fd, F_SETFL, O_NONBLOCK);
			int rc = smarm_io_wait_readable_timeout(p->out_fd,
								deadline - now);
			if (rc != 0)
				return false;
		} else {
			struct pollfd pf = { p->out_fd, POLLIN, 0 };
			int ms = (int)((deadline - now) / 1000000) + 1;
			if (poll(&pf, 1, ms) <= 0)
				return false;
		}
		ssize_t k = read(p->out_fd, buf + have, sizeof buf - 1 - have);
		if (k == 0)
			return false;
		if (k > 0)
			have += (size_t)k;
	}
}

/* Start erl as tag<pid>@localhost running eval with cookie (and
 * net_ticktime, unless NULL) and wait for its READY line. */
static bool peer_start_eval(struct peer *p, const char *tag, const char *cookie,
			    const char *eval, const char *ticktime)
{
	char sname[64], line[256];
	snprintf(sname, sizeof sname, "%s%d@localhost", tag, (int)getpid());
	if (!peer_spawn(p, sname, cookie, eval, ticktime))
		return false;
	return peer_await(p, "READY", line, sizeof line);
}

/* Whether prog is an executable on PATH. */
static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];
	while (path != NULL && *path != '\0') {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* A dist suite's main: skipped (TAP "1..0 # SKIP") without erl or
 * epmd, else run. */
static int erl_suite_main(Suite *suite)
{
	if (!on_path("erl") || !on_path("epmd")) {
		printf("1..0 # SKIP erl or epmd not on PATH (Debian: "
		       "erlang-nox)\n");
		return 0;
	}
	if (system("epmd -daemon") != 0) {
		printf("1..0 # SKIP epmd -daemon failed\n");
		return 0;
	}
	SRunner *sr = srunner_create(suite);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif

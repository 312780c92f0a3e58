// SPDX-License-Identifier: MIT
//
// consumer.cpp - a C++ program built against the public header alone,
// with -std=c++17 -pedantic-errors: every macro and declaration of
// smarm.h must be valid ISO C++, and the calls link and run. Prints TAP.

#include <smarm/smarm.h>

// After smarm.h, which declares only the tag: the same struct sockaddr.
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>

static int checks;
static int failed;

static void check(bool ok, const char *what)
{
	checks++;
	if (!ok)
		failed++;
	std::printf("%s %d - %s\n", ok ? "ok" : "not ok", checks, what);
}

static void root(void *arg)
{
	*static_cast<smarm_pid_t *>(arg) = smarm_actor_self();
}

int main()
{
	smarm_pid_t none = SMARM_PID_NONE;
	smarm_timer_t no_timer = SMARM_TIMER_NONE;
	smarm_pid_t self = SMARM_PID_NONE;
	smarm_node_t *node = nullptr;
	int how = -1;

	std::printf("1..6\n");
	check(none.id == 0 && no_timer.id == 0, "the zero ids are zero");
	check(smarm_node_open(&node, nullptr) == SMARM_OK, "a node opens");
	check(smarm_node_run(node, root, &self, &how, nullptr) == SMARM_OK &&
		      how == SMARM_EXIT_NORMAL,
	      "a root actor runs");
	check(!smarm_pid_eq(self, none), "the root had a pid");
	check(smarm_node_close(node) == SMARM_OK, "the node closes");
	sockaddr_in sin = {};
	sin.sin_family = AF_INET;
	check(smarm_io_connect(0, reinterpret_cast<const sockaddr *>(&sin),
			       sizeof sin, 0) == SMARM_ENOTACTOR,
	      "smarm_io_connect takes the system's struct sockaddr");
	return failed == 0 ? 0 : 1;
}

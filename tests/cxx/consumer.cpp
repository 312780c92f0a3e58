// SPDX-License-Identifier: MIT
//
// consumer.cpp - a C++ program built against the public headers alone,
// with -std=c++17 -pedantic-errors: every macro and declaration of
// smarm.h, dist.h and smarm_plugin.h must be valid ISO C++, and the calls link
// and run. SMARM_PLUGIN_DEFINE expands here (a descriptor of both
// kinds, read back through the entry it defines), and a plugin built
// from C++ (plugin.cpp, its path in SMARM_TEST_CXX_PLUGIN) loads and
// serves a call. Prints TAP.

#include <smarm/smarm.h>
#include <smarm/dist.h>
#include <smarm/smarm_plugin.h>

// After smarm.h, which declares only the tag: the same struct sockaddr.
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

// SMARM_PLUGIN_DEFINE with a gen_server and a gen_statem (neither is
// loaded: only the descriptor the macro makes is read).
static smarm_gs_desc_t make_gs()
{
	smarm_gs_desc_t d = {};
	d.struct_size = sizeof d;
	d.name = "gs";
	return d;
}

static smarm_sm_desc_t make_sm()
{
	smarm_sm_desc_t d = {};
	d.struct_size = sizeof d;
	d.name = "sm";
	return d;
}

static const smarm_gs_desc_t gs = make_gs();
static const smarm_sm_desc_t sm = make_sm();
static const smarm_gs_desc_t *const servers[] = { &gs, &gs };
static const smarm_sm_desc_t *const machines[] = { &sm };

SMARM_PLUGIN_DEFINE("cxx", servers, machines);

static bool defined_right()
{
	const smarm_plugin_desc_t *d = smarm_plugin_entry(
		SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MINOR);
	return d != nullptr &&
	       smarm_plugin_entry(SMARM_PLUGIN_ABI_MAJOR + 1, 0) == nullptr &&
	       d->abi_major == SMARM_PLUGIN_ABI_MAJOR &&
	       d->abi_minor == SMARM_PLUGIN_ABI_MINOR &&
	       d->struct_size == sizeof(smarm_plugin_desc_t) &&
	       std::strcmp(d->name, "cxx") == 0 && d->servers == servers &&
	       d->n_servers == 2 && d->machines == machines &&
	       d->n_machines == 1;
}

struct echo_run {
	const smarm_behaviour_t *b;
	int64_t got;
	int rc;
};

static void root_echo(void *arg)
{
	echo_run *e = static_cast<echo_run *>(arg);
	smarm_server_t *s = nullptr;
	e->rc = smarm_server_start(e->b, nullptr, nullptr, &s);
	if (e->rc == 0)
		e->rc = smarm_server_callv(s, "echo", SMARM_NO_TIMEOUT, &e->got,
					   static_cast<int64_t>(41));
	if (s != nullptr) {
		(void)smarm_server_shutdown(s, SMARM_NO_TIMEOUT, nullptr);
		smarm_server_free(s);
	}
}

int main()
{
	smarm_pid_t none = SMARM_PID_NONE;
	smarm_timer_t no_timer = SMARM_TIMER_NONE;
	smarm_dist_pid_t no_dist_pid = SMARM_DIST_PID_NONE;
	smarm_pid_t self = SMARM_PID_NONE;
	smarm_node_t *node = nullptr;
	int how = -1;

	std::printf("1..8\n");
	check(none.id == 0 && no_timer.id == 0 && no_dist_pid.id == 0,
	      "the zero ids are zero");
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
	check(defined_right(), "SMARM_PLUGIN_DEFINE makes the descriptor");
	const char *so = std::getenv("SMARM_TEST_CXX_PLUGIN");
	smarm_plugin_t *pl = nullptr;
	echo_run e = { nullptr, 0, -1 };
	char msg[256] = "";
	if (so != nullptr && smarm_plugin_open(so, &pl, msg, sizeof msg) == 0 &&
	    smarm_plugin_behaviour(pl, "echo", &e.b) == 0 &&
	    smarm_node_open(&node, nullptr) == SMARM_OK) {
		(void)smarm_node_run(node, root_echo, &e, &how, nullptr);
		(void)smarm_node_close(node);
	}
	if (pl != nullptr)
		(void)smarm_plugin_close(pl);
	check(e.rc == 0 && e.got == 42,
	      "a C++ plugin of SMARM_PLUGIN_DEFINE_SERVERS loads and serves");
	if (msg[0] != '\0')
		std::printf("# %s\n", msg);
	return failed == 0 ? 0 : 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * test_app.c - smarm-run's application files (tools/app.c): a full file
 * parses into the tree it describes (nesting, defaults, quoting,
 * relative plugin paths); every error the format defines is reported as
 * "file:line[:col]: text" at the right place, one case per error; and
 * the load step (tools/app_load.c) reports a plugin that does not open,
 * a shared object that is no plugin, a plugin the trust checks refuse
 * and a behaviour a plugin lacks at the line that names it, returning
 * the loader's status, and builds a nested tree's specs. Needs
 * TAGGER_SO (a plugin) and NOT_A_PLUGIN_SO (a shared object without the
 * entry symbol) in the environment.
 */
#include "../harness.h"

#include "../../tools/app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct app *parse_ok(const char *text)
{
	struct app *a = NULL;
	char err[APP_ERR_MAX];
	int rc = app_parse("t/x.app", text, strlen(text), &a, err, sizeof err);
	ck_assert_msg(rc == 0, "unexpected error: %s", err);
	ck_assert_ptr_nonnull(a);
	return a;
}

/* Parse text, expect failure with message prefix "t/x.app:<where>: "
 * and containing want. */
static void parse_bad(const char *text, const char *where, const char *want)
{
	struct app *a = (struct app *)1;
	char err[APP_ERR_MAX];
	char prefix[64];
	int rc = app_parse("t/x.app", text, strlen(text), &a, err, sizeof err);
	ck_assert_int_eq(rc, -1);
	ck_assert_ptr_null(a);
	snprintf(prefix, sizeof prefix, "t/x.app:%s: ", where);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0,
		      "want prefix '%s', got '%s'", prefix, err);
	ck_assert_msg(strstr(err, want) != NULL, "want '%s' in '%s'", want,
		      err);
}

#define HEAD "app t\nplugin p ./p.so\n"

START_TEST(test_app_full_file_builds_the_tree)
{
	struct app *a = parse_ok(
		"# demo\n"
		"app demo   # trailing comment\n"
		"run 1500ms\n"
		"workers 4\n"
		"plugin counter ./counter.so\n"
		"plugin kv \"/abs/k v.so\"\r\n"
		"\n"
		"supervisor root one_for_one intensity 10/2s fault_weight 4\n"
		"  server counter.counter name=counter restart=permanent "
		"shutdown=5s args=\"start=0 \\\"q\\\" \\\\\"\n"
		"  supervisor pool rest_for_one\n"
		"    server kv.kv name=kv restart=transient shutdown=brutal\n"
		"    server kv.kv id=kv2 restart=temporary shutdown=infinity "
		"ready=infinity\n"
		"  server counter.counter id=c2 ready=250ms\n");
	struct app_node *r = a->a_root, *k;
	ck_assert_str_eq(a->a_name, "demo");
	ck_assert_uint_eq(a->a_run_ns, MS(1500));
	ck_assert_int_eq(a->a_workers, 4);
	ck_assert_uint_eq(a->a_nplugins, 2);
	ck_assert_str_eq(a->a_plugins[0].ap_resolved, "t/counter.so");
	ck_assert_str_eq(a->a_plugins[1].ap_resolved, "/abs/k v.so");
	ck_assert_int_eq(r->an_kind, APP_SUP);
	ck_assert_str_eq(r->an_id, "root");
	ck_assert_uint_eq(r->an_max_restarts, 10);
	ck_assert_uint_eq(r->an_period_ns, MS(2000));
	ck_assert_uint_eq(r->an_fault_weight, 4);
	ck_assert_uint_eq(r->an_nkids, 3);
	k = r->an_kids[0];
	ck_assert_int_eq(k->an_kind, APP_SERVER);
	ck_assert_str_eq(k->an_id, "counter");
	ck_assert_str_eq(k->an_name, "counter");
	ck_assert_str_eq(k->an_bhv, "counter");
	ck_assert_str_eq(k->an_args, "start=0 \"q\" \\");
	ck_assert_uint_eq(k->an_shutdown_ns, MS(5000));
	k = r->an_kids[1];
	ck_assert_int_eq(k->an_kind, APP_SUP);
	ck_assert_int_eq(k->an_strategy, SMARM_SUP_REST_FOR_ONE);
	ck_assert_uint_eq(k->an_max_restarts, 3); /* the defaults */
	ck_assert_uint_eq(k->an_period_ns, MS(5000));
	ck_assert_uint_eq(k->an_fault_weight, 1);
	ck_assert_uint_eq(k->an_nkids, 2);
	ck_assert_int_eq(k->an_kids[0]->an_restart, SMARM_SUP_TRANSIENT);
	ck_assert_uint_eq(k->an_kids[0]->an_shutdown_ns, SMARM_SUP_BRUTAL_KILL);
	ck_assert_uint_eq(k->an_kids[0]->an_plugin, 1);
	ck_assert_str_eq(k->an_kids[1]->an_id, "kv2");
	ck_assert_str_eq(k->an_kids[1]->an_name, "");
	ck_assert_int_eq(k->an_kids[1]->an_restart, SMARM_SUP_TEMPORARY);
	ck_assert_uint_eq(k->an_kids[1]->an_shutdown_ns, SMARM_SUP_INFINITY);
	ck_assert_uint_eq(k->an_kids[1]->an_ready_ns, SMARM_NO_TIMEOUT);
	k = r->an_kids[2]; /* back at the first level after the pool */
	ck_assert_str_eq(k->an_id, "c2");
	ck_assert_uint_eq(k->an_ready_ns, MS(250));
	ck_assert_int_eq(k->an_restart, SMARM_SUP_PERMANENT);
	ck_assert_ptr_null(k->an_args);
	app_free(a);
}
END_TEST

START_TEST(test_app_defaults_and_file_without_newline)
{
	struct app *a = parse_ok(HEAD "supervisor s one_for_all\n"
				      " server p.b");
	struct app_node *k = a->a_root->an_kids[0];
	ck_assert_uint_eq(a->a_run_ns, 0);
	ck_assert_int_eq(a->a_workers, 0);
	ck_assert_int_eq(a->a_root->an_strategy, SMARM_SUP_ONE_FOR_ALL);
	ck_assert_str_eq(k->an_id, "b"); /* no id, no name: the behaviour */
	ck_assert_uint_eq(k->an_shutdown_ns, SMARM_SUP_SHUTDOWN_DEFAULT);
	ck_assert_uint_eq(k->an_ready_ns, MS(5000));
	ck_assert_str_eq(a->a_plugins[0].ap_resolved, "t/p.so");
	app_free(a);
	/* a file in the current directory resolves against ".", and no
	 * "./" step is repeated in what messages print */
	{
		const char *t = HEAD "supervisor s one_for_one\n";
		char err[APP_ERR_MAX];
		ck_assert_int_eq(
			app_parse("x.app", t, strlen(t), &a, err, sizeof err),
			0);
		ck_assert_str_eq(a->a_plugins[0].ap_resolved, "./p.so");
		app_free(a);
		ck_assert_int_eq(
			app_parse("./x.app", t, strlen(t), &a, err, sizeof err),
			0);
		ck_assert_str_eq(a->a_plugins[0].ap_resolved, "./p.so");
		app_free(a);
	}
}
END_TEST

/*
 * Parsing is linear in the children of a supervisor: 45,000 servers with
 * ids and names (nearly the 1 MiB a file may hold) parse in well under
 * 4 s. A check of each id against its siblings and each name against
 * the tree, ~10^9 string compares each, takes many times that.
 */
START_TEST(test_app_many_children_parse_in_linear_time)
{
	enum { KIDS = 45000 };
	size_t cap = 64 + (size_t)KIDS * 24;
	char *text = malloc(cap);
	char err[APP_ERR_MAX];
	struct app *a = NULL;
	size_t len;
	struct timespec t0, t1;
	double secs, bound = 4.0 * harness_time_scale();
	ck_assert_ptr_nonnull(text);
	len = (size_t)snprintf(text, cap, HEAD "supervisor s one_for_one\n");
	for (int i = 0; i < KIDS; i++) {
		int d = i / 52 % 36; /* 0-9 a-z */
		char id[4] = { (char)(i % 52 < 26 ? 'A' + i % 52
						  : 'a' + i % 52 - 26),
			       (char)(d < 10 ? '0' + d : 'a' + d - 10),
			       (char)('a' + i / 1872), '\0' };
		len += (size_t)snprintf(text + len, cap - len,
					" server p.b name=%s\n", id);
	}
	ck_assert_uint_le(len, APP_FILE_MAX);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(app_parse("t/x.app", text, len, &a, err, sizeof err) == 0,
		      "%s", err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) +
	       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_uint_eq(a->a_root->an_nkids, KIDS);
	ck_assert_msg(secs < bound, "%d children parsed in %.2f s (bound %.1f)",
		      KIDS, secs, bound);
	app_free(a);
	/* and a duplicate among them is still found, with its first line */
	len += (size_t)snprintf(text + len, cap - len, " server p.b id=A0a\n");
	ck_assert_int_eq(app_parse("t/x.app", text, len, &a, err, sizeof err),
			 -1);
	ck_assert_msg(strstr(err, "duplicate child id 'A0a' in supervisor 's' "
				  "(first at line 4)") != NULL,
		      "%s", err);
	free(text);
}
END_TEST

START_TEST(test_app_durations)
{
	uint64_t ns = 7;
	ck_assert_int_eq(app_parse_duration("0ns", &ns), 0);
	ck_assert_uint_eq(ns, 0);
	ck_assert_int_eq(app_parse_duration("3us", &ns), 0);
	ck_assert_uint_eq(ns, 3000);
	ck_assert_int_eq(app_parse_duration("2m", &ns), 0);
	ck_assert_uint_eq(ns, 120000000000ull);
	ck_assert_int_eq(app_parse_duration("1h", &ns), 0);
	ck_assert_uint_eq(ns, 3600000000000ull);
	ck_assert_int_eq(app_parse_duration("", &ns), -1);
	ck_assert_int_eq(app_parse_duration("5", &ns), -1);
	ck_assert_int_eq(app_parse_duration("s", &ns), -1);
	ck_assert_int_eq(app_parse_duration("5sec", &ns), -1);
	ck_assert_int_eq(app_parse_duration("-5s", &ns), -1);
	ck_assert_int_eq(app_parse_duration("99999999999999999999s", &ns), -1);
	ck_assert_int_eq(app_parse_duration("18446744073h", &ns), -1);
	ck_assert_int_eq(app_parse_duration("18446744073709551615ns", &ns),
			 -1); /* that is SMARM_NO_TIMEOUT */
}
END_TEST

START_TEST(test_app_error_unknown_keyword)
{
	parse_bad(HEAD "frobnicate 3\n", "3:1", "unknown keyword 'frobnicate'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b colour=red\n",
		  "4:14", "unknown keyword 'colour'");
	parse_bad(HEAD "supervisor s one_for_one strength 3/5s\n", "3:26",
		  "unknown keyword 'strength'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b restart\n",
		  "4:14", "expected key=value");
}
END_TEST

START_TEST(test_app_error_bad_strategy)
{
	parse_bad(HEAD "supervisor s simple_one_for_one\n", "3:14",
		  "bad strategy 'simple_one_for_one'");
}
END_TEST

START_TEST(test_app_error_bad_intensity_or_duration)
{
	parse_bad(HEAD "supervisor s one_for_one intensity 3\n", "3:36",
		  "bad intensity '3'");
	parse_bad(HEAD "supervisor s one_for_one intensity 3/0s\n", "3:36",
		  "bad intensity");
	parse_bad(HEAD "supervisor s one_for_one intensity 65537/1s\n", "3:36",
		  "bad intensity");
	parse_bad(HEAD "supervisor s one_for_one intensity x/1s\n", "3:36",
		  "bad intensity");
	parse_bad(HEAD "supervisor s one_for_one intensity 3/5\n", "3:36",
		  "bad intensity");
	parse_bad(HEAD "supervisor s one_for_one intensity /5s\n", "3:36",
		  "bad intensity");
	parse_bad(HEAD "supervisor s one_for_one fault_weight 0\n", "3:39",
		  "bad fault_weight '0'");
	parse_bad(HEAD "supervisor s one_for_one fault_weight 65537\n", "3:39",
		  "bad fault_weight");
	parse_bad(HEAD "supervisor s one_for_one fault_weight 2x\n", "3:39",
		  "bad fault_weight");
	parse_bad(HEAD "supervisor s one_for_one fault_weight 2 intensity\n",
		  "3:41", "missing field");
	parse_bad(HEAD "supervisor s one_for_one weight 2\n", "3:26",
		  "unknown keyword 'weight'");
	parse_bad("app t\nrun 5\n", "2:5", "bad duration '5'");
	parse_bad("app t\nrun 0s\n", "2:5", "bad duration '0s'");
	parse_bad("app t\nrun 5s 6s\n", "2:8", "unexpected '6s'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b ready=soon\n",
		  "4:14", "bad duration 'soon'");
	parse_bad("app t\nworkers 0\n", "2:9", "bad worker count");
	parse_bad("app t\nworkers 65\n", "2:9", "bad worker count");
	parse_bad("app t\nworkers 2x\n", "2:9", "bad worker count");
}
END_TEST

START_TEST(test_app_error_invalid_restart_or_shutdown)
{
	parse_bad(HEAD
		  "supervisor s one_for_one\n  server p.b restart=always\n",
		  "4:14", "invalid restart 'always'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b shutdown=0s\n",
		  "4:14", "invalid shutdown '0s'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b shutdown=kill\n",
		  "4:14", "invalid shutdown 'kill'");
}
END_TEST

START_TEST(test_app_error_duplicates)
{
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b\n"
		       "  server p.b\n",
		  "5:10",
		  "duplicate child id 'b' in supervisor 's' (first at "
		  "line 4)");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b id=x\n"
		       "  supervisor x one_for_one\n",
		  "5:14", "duplicate child id 'x'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b name=n\n"
		       "  supervisor u one_for_one\n    server p.c name=n\n",
		  "6:16", "duplicate name 'n' (first at line 4)");
	parse_bad(HEAD "plugin p ./q.so\n", "3:8",
		  "duplicate plugin alias 'p'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b name=n name=m\n",
		  "4:21", "'name' given twice");
	parse_bad(HEAD "app u\n", "3:1", "a second 'app' line");
	parse_bad(HEAD "run 1s\nrun 2s\n", "4:1", "a second 'run' line");
	parse_bad(HEAD "supervisor s one_for_one\nsupervisor u one_for_one\n",
		  "4:1", "a second root supervisor");
	/* the same id under two supervisors is fine */
	app_free(parse_ok(HEAD "supervisor s one_for_one\n  server p.b\n"
			       "  supervisor u one_for_one\n    server p.b\n"));
}
END_TEST

START_TEST(test_app_error_unknown_plugin_alias)
{
	parse_bad(HEAD "supervisor s one_for_one\n  server q.b\n", "4:10",
		  "unknown plugin alias 'q'");
	/* declared after its use */
	parse_bad("app t\nsupervisor s one_for_one\n  server p.b\n"
		  "plugin p ./p.so\n",
		  "3:10", "unknown plugin alias 'p'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.9b\n", "4:12",
		  "bad behaviour name '9b'");
	parse_bad(HEAD "supervisor s one_for_one\n  server pb\n", "4:10",
		  "missing field: PLUGIN.BEHAVIOUR");
}
END_TEST

START_TEST(test_app_error_bad_nesting)
{
	parse_bad(HEAD "  server p.b\n", "3:3", "bad nesting");
	parse_bad(HEAD "supervisor s one_for_one\nserver p.b\n", "4:1",
		  "bad nesting: a server must be indented");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b\n"
		       "    server p.c\n",
		  "5:5", "bad nesting: indented under a server");
	parse_bad(HEAD "supervisor s one_for_one\n    server p.b\n"
		       "  server p.c\n",
		  "5:3", "does not match the siblings' (4)");
	parse_bad(HEAD "supervisor s one_for_one\n  plugin q ./q.so\n", "4:3",
		  "'plugin' belongs at the start of a line");
	parse_bad(HEAD "supervisor s one_for_one\n\tserver p.b\n", "4:1",
		  "tab in indentation");
	/* a header line closes the tree: nothing nests under it after */
	parse_bad(HEAD "supervisor s one_for_one\nrun 1s\n  server p.b\n",
		  "5:3", "outside a supervisor");
	{
		char text[2048];
		size_t o = (size_t)snprintf(text, sizeof text, HEAD);
		for (int d = 0; d <= APP_DEPTH_MAX; d++)
			o += (size_t)snprintf(text + o, sizeof text - o,
					      "%*ssupervisor s%d one_for_one\n",
					      d, "", d);
		parse_bad(text, "19:17", "nested deeper than 16");
	}
}
END_TEST

START_TEST(test_app_error_missing_fields)
{
	parse_bad("plugin p ./p.so\nsupervisor s one_for_one\n", "2",
		  "missing field: no 'app NAME' line");
	parse_bad("", "1", "missing field: no 'app NAME' line");
	parse_bad("app t\n", "1", "missing field: no root supervisor");
	parse_bad("app\n", "1", "missing field: app NAME");
	parse_bad(HEAD "plugin q\n", "3", "missing field: plugin ALIAS PATH");
	parse_bad(HEAD "supervisor s\n", "3", "missing field: supervisor ID");
	parse_bad(HEAD "supervisor s one_for_one intensity\n", "3:26",
		  "missing field");
	parse_bad(HEAD "supervisor s one_for_one\n  server\n", "4",
		  "missing field: server PLUGIN.BEHAVIOUR");
	parse_bad(HEAD "plugin q \"\"\n", "3:10", "empty plugin path");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b name=\n", "4:14",
		  "empty name");
}
END_TEST

START_TEST(test_app_error_over_long_names)
{
	char text[1024];
	char big[80];
	memset(big, 'a', 64);
	big[64] = '\0'; /* one more than SMARM_NAME_MAX */
	snprintf(text, sizeof text, HEAD "supervisor %s one_for_one\n", big);
	parse_bad(text, "3:12", "supervisor id longer than 63 bytes");
	snprintf(text, sizeof text,
		 HEAD "supervisor s one_for_one\n  server p.b name=%s\n", big);
	parse_bad(text, "4:14", "name longer than 63 bytes");
	snprintf(text, sizeof text,
		 HEAD "supervisor s one_for_one\n  server p.b id=%s\n", big);
	parse_bad(text, "4:14", "id longer than 63 bytes");
	snprintf(text, sizeof text, "app %s\n", big);
	parse_bad(text, "1:5", "app name longer than 63 bytes");
	snprintf(text, sizeof text, "app t\nplugin %s x.so\n", big);
	parse_bad(text, "2:8", "plugin alias longer than 63 bytes");
	snprintf(text, sizeof text,
		 HEAD "supervisor s one_for_one\n  server p.%s\n", big);
	parse_bad(text, "4:12", "bad behaviour name");
	/* exactly 63 is fine */
	big[63] = '\0';
	snprintf(text, sizeof text,
		 HEAD "supervisor %s one_for_one\n  server p.b name=%s\n", big,
		 big);
	app_free(parse_ok(text));
}
END_TEST

START_TEST(test_app_error_lexical)
{
	static char text[APP_LINE_MAX + 64];
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b args=\"x\n",
		  "4:19", "unterminated string");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b args=\"\\n\"\n",
		  "4:20", "bad escape");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b args=a\"b\"\n",
		  "4:20", "stray '\"'");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b args=\"a\"b\n",
		  "4:22", "text after a closing");
	parse_bad("app t\nrun 1s\0\n", "2", "missing field"); /* strlen stops */
	{
		struct app *a = NULL;
		char err[APP_ERR_MAX];
		static const char nul[] = "app t\nrun 1s\0x\n";
		ck_assert_int_eq(app_parse("t/x.app", nul, sizeof nul - 1, &a,
					   err, sizeof err),
				 -1);
		ck_assert_str_eq(err, "t/x.app:2:7: NUL byte in the file");
	}
	memset(text, ' ', sizeof text);
	memcpy(text, "app t\n#", 7);
	text[6 + APP_LINE_MAX + 1] = '\n';
	text[6 + APP_LINE_MAX + 2] = '\0';
	parse_bad(text, "2", "line longer than 4096 bytes");
	text[6 + APP_LINE_MAX] = '\n'; /* exactly the limit: a comment */
	text[6 + APP_LINE_MAX + 1] = '\0';
	parse_bad(text, "2", "no root supervisor");
	/* ${ALIAS} in args: the plugin's resolved path */
	{
		struct app *a =
			parse_ok(HEAD "supervisor s one_for_one\n"
				      "  server p.b args=\"x=${p} $y ${p}\"\n");
		ck_assert_str_eq(a->a_root->an_kids[0]->an_args,
				 "x=t/p.so $y t/p.so");
		app_free(a);
	}
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b args=${q}\n",
		  "4:14", "unknown plugin alias 'q' in args");
	parse_bad(HEAD "supervisor s one_for_one\n  server p.b args=${p\n",
		  "4:14", "unterminated '${'");
	/* '#' inside a word is not a comment; in a string neither */
	{
		struct app *a = parse_ok("app t\nplugin p ./a#b.so\n"
					 "supervisor s one_for_one\n"
					 "  server p.b args=\"#x\" # c\n");
		ck_assert_str_eq(a->a_plugins[0].ap_path, "./a#b.so");
		ck_assert_str_eq(a->a_root->an_kids[0]->an_args, "#x");
		app_free(a);
	}
}
END_TEST

START_TEST(test_app_misuse_and_read)
{
	struct app *a = NULL;
	char err[APP_ERR_MAX];
	const smarm_sup_spec_t *spec = NULL;
	ck_assert_int_eq(app_parse("f", "app t", 5, NULL, err, sizeof err), -1);
	ck_assert_int_eq(app_parse("f", NULL, 3, &a, err, sizeof err), -1);
	ck_assert_int_eq(app_parse("f", "app t", 5, &a, NULL, 0), -1);
	ck_assert_int_eq(app_read("/nonexistent/x.app", &a, err, sizeof err),
			 -1);
	ck_assert_msg(strncmp(err, "/nonexistent/x.app: cannot open", 31) == 0,
		      "%s", err);
	ck_assert_int_eq(app_load(NULL, err, sizeof err), SMARM_EINVAL);
	ck_assert_int_eq(app_build(NULL, &spec, err, sizeof err), -1);
	app_free(NULL);
	/* a tiny message buffer is cut, never overrun */
	{
		char small[8];
		memset(small, 'z', sizeof small);
		ck_assert_int_eq(app_parse("t/x.app", "bogus", 5, &a, small,
					   sizeof small),
				 -1);
		ck_assert_int_eq(strlen(small), 7);
	}
}
END_TEST

/* Write text to a file of its own (the plugin paths resolve against
 * that file's directory); returns its path (static). */
static const char *write_app(const char *text)
{
	static char path[64];
	FILE *f;
	snprintf(path, sizeof path, "/tmp/smarm-test-app-%d.app",
		 (int)getpid());
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Read, load and build path; returns app_load's or app_build's rc. */
static int load(const char *path, struct app **out, char *err, size_t len)
{
	const smarm_sup_spec_t *spec = NULL;
	int rc = app_read(path, out, err, len);
	ck_assert_msg(rc == 0, "%s", err);
	rc = app_load(*out, err, len);
	if (rc == 0) {
		rc = app_build(*out, &spec, err, len);
		ck_assert_ptr_nonnull(spec);
	}
	return rc;
}

START_TEST(test_app_load_opens_plugins_and_finds_behaviours)
{
	const char *tagger = getenv("TAGGER_SO");
	const char *other = getenv("NOT_A_PLUGIN_SO");
	char text[1024], err[APP_ERR_MAX], want[256];
	struct app *a = NULL;
	const char *path;
	ck_assert_ptr_nonnull(tagger);
	ck_assert_ptr_nonnull(other);

	/* a whole tree: servers and a nested supervisor, specs built */
	snprintf(text, sizeof text,
		 "app t\nplugin p %s\nsupervisor s one_for_one\n"
		 "  server p.tagger id=a\n  supervisor u rest_for_one\n"
		 "    server p.tagger id=b name=bee\n",
		 tagger);
	path = write_app(text);
	ck_assert_msg(load(path, &a, err, sizeof err) == 0, "%s", err);
	ck_assert_ptr_nonnull(a->a_root->an_kids[0]->an_b);
	ck_assert_ptr_nonnull(a->a_root->an_kids[1]->an_spec);
	app_free(a);

	/* no such file: the loader's message at the plugin line */
	path = write_app("app t\nplugin p ./no-such-plugin.so\n"
			 "supervisor s one_for_one\n");
	ck_assert_int_eq(load(path, &a, err, sizeof err), SMARM_EPLUGINOPEN);
	snprintf(want, sizeof want, "%s:2: plugin 'p': ", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	ck_assert_msg(strstr(err, "no-such-plugin.so") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "(SMARM_EPLUGINOPEN)") != NULL, "%s", err);
	app_free(a);

	/* a shared object that is no plugin */
	snprintf(text, sizeof text,
		 "app t\nplugin t %s\nplugin p %s\n"
		 "supervisor s one_for_one\n",
		 tagger, other);
	path = write_app(text);
	ck_assert_int_eq(load(path, &a, err, sizeof err), SMARM_ENOENTRY);
	snprintf(want, sizeof want, "%s:3: plugin 'p': ", path);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	ck_assert_msg(strstr(err, "(SMARM_ENOENTRY)") != NULL, "%s", err);
	app_free(a); /* closes the one plugin that did open */

	/* a behaviour the plugin lacks: at the server's line and column */
	snprintf(text, sizeof text,
		 "app t\nplugin p %s\nsupervisor s one_for_one\n"
		 "  server p.tagger\n  server p.nope\n",
		 tagger);
	path = write_app(text);
	ck_assert_int_eq(load(path, &a, err, sizeof err), SMARM_ENOBEHAVIOUR);
	snprintf(want, sizeof want,
		 "%s:5:3: plugin 'p' (%s) has no behaviour 'nope' "
		 "(SMARM_ENOBEHAVIOUR)",
		 path, tagger);
	ck_assert_str_eq(err, want);
	app_free(a);
	unlink(path);
}
END_TEST

/*
 * A plugin the trust checks refuse (world-writable) is the loader's
 * SMARM_EPLUGINPERM, returned as such: smarm-run tells that refusal
 * from the others by the status, not by the message's words.
 */
START_TEST(test_app_load_returns_the_loaders_status)
{
	const char *tagger = getenv("TAGGER_SO");
	char dir[] = "/tmp/smarm-test-app-perm.XXXXXX";
	char so[64], text[256], err[APP_ERR_MAX], cmd[512];
	struct app *a = NULL;
	const char *path;
	ck_assert_ptr_nonnull(tagger);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(so, sizeof so, "%s/t.so", dir);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0666 '%s'", tagger, so,
		 so);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(text, sizeof text,
		 "app t\nplugin p %s\nsupervisor s one_for_one\n"
		 "  server p.tagger\n",
		 so);
	path = write_app(text);
	ck_assert_int_eq(load(path, &a, err, sizeof err), SMARM_EPLUGINPERM);
	ck_assert_msg(strstr(err, "writable by anyone") != NULL, "%s", err);
	app_free(a);
	/* allowed by the app's flags, it loads */
	ck_assert_int_eq(app_read(path, &a, err, sizeof err), 0);
	a->a_open_flags = SMARM_PLUGIN_ALLOW_INSECURE;
	ck_assert_msg(app_load(a, err, sizeof err) == 0, "%s", err);
	app_free(a);
	unlink(path);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *smarm_test_app_suite(void)
{
	Suite *s = suite_create("app");
	TCase *t = tcase_create("parse");
	tcase_add_test(t, test_app_full_file_builds_the_tree);
	tcase_add_test(t, test_app_defaults_and_file_without_newline);
	tcase_add_test(t, test_app_durations);
	tcase_add_test(t, test_app_many_children_parse_in_linear_time);
	suite_add_tcase(s, t);
	t = tcase_create("errors");
	tcase_add_test(t, test_app_error_unknown_keyword);
	tcase_add_test(t, test_app_error_bad_strategy);
	tcase_add_test(t, test_app_error_bad_intensity_or_duration);
	tcase_add_test(t, test_app_error_invalid_restart_or_shutdown);
	tcase_add_test(t, test_app_error_duplicates);
	tcase_add_test(t, test_app_error_unknown_plugin_alias);
	tcase_add_test(t, test_app_error_bad_nesting);
	tcase_add_test(t, test_app_error_missing_fields);
	tcase_add_test(t, test_app_error_over_long_names);
	tcase_add_test(t, test_app_error_lexical);
	tcase_add_test(t, test_app_misuse_and_read);
	suite_add_tcase(s, t);
	t = tcase_create("load");
	tcase_add_test(t, test_app_load_opens_plugins_and_finds_behaviours);
	tcase_add_test(t, test_app_load_returns_the_loaders_status);
	suite_add_tcase(s, t);
	return s;
}

SMARM_TEST_MAIN(app)

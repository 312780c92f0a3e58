/* SPDX-License-Identifier: MIT */
/*
 * test_plugin.c - smarm_plugin_open and friends: a good plugin loads, a
 * second open returns the same plugin, closes count; every refusal of
 * smarm_plugin_open, each provoked by a deliberately broken plugin of
 * tests/plugins_bad/bad.c, with its status and a message naming the
 * cause; paths dlopen must not be given (a FIFO, a device, a
 * directory, "", a bare name); files another user could change (the
 * trust checks, and their override; smarm_plugin_check_fd on the file as
 * opened, refusing a name that no longer leads to it); misuse of every
 * loader call; the
 * descriptor and entry that SMARM_PLUGIN_DEFINE and its one-kind forms
 * make.
 */
#include "harness.h"

#include <smarm/smarm_plugin.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[4096];
static char msg[512];

static const char *bad(const char *variant)
{
	const char *dir = getenv("SMARM_TEST_BAD_DIR");
	ck_assert_ptr_nonnull(dir);
	snprintf(path, sizeof path, "%s/bad_%s.so", dir, variant);
	return path;
}

static void refused(const char *variant, int rc, const char *what)
{
	smarm_plugin_t *pl = (void *)0x1;
	msg[0] = 'x';
	ck_assert_int_eq(smarm_plugin_open(bad(variant), &pl, msg, sizeof msg),
			 rc);
	ck_assert_msg(strstr(msg, what) != NULL,
		      "%s: message \"%s\" lacks \"%s\"", variant, msg, what);
}

START_TEST(test_plugin_good_opens_twice_as_one)
{
	smarm_plugin_t *a = NULL, *b = NULL;
	const smarm_behaviour_t *be = NULL, *be2 = NULL;
	ck_assert_int_eq(smarm_plugin_open(bad("good"), &a, msg, sizeof msg),
			 0);
	ck_assert_str_eq(msg, "");
	ck_assert_int_eq(smarm_plugin_open(bad("good"), &b, NULL, 0), 0);
	ck_assert_ptr_eq(a, b);
	ck_assert_int_eq(smarm_plugin_behaviour(a, "one", &be), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(b, "one", &be2), 0);
	ck_assert_ptr_eq(be, be2);
	ck_assert_int_eq(smarm_plugin_behaviour(a, "two", &be),
			 SMARM_ENOBEHAVIOUR);
	ck_assert_int_eq(smarm_plugin_close(a), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(b, "one", &be), 0);
	ck_assert_int_eq(smarm_plugin_close(b), 0);
	/* both references gone: no longer an open plugin */
	ck_assert_int_eq(smarm_plugin_close(b), SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_behaviour(b, "one", &be), SMARM_EINVAL);
	/* and it opens again */
	ck_assert_int_eq(smarm_plugin_open(bad("good"), &a, NULL, 0), 0);
	ck_assert_int_eq(smarm_plugin_close(a), 0);
}
END_TEST

START_TEST(test_plugin_short_descriptors_load)
{
	smarm_plugin_t *pl = NULL;
	const smarm_behaviour_t *be = NULL;
	ck_assert_int_eq(smarm_plugin_open(bad("short"), &pl, msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "one", &be), 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
}
END_TEST

START_TEST(test_plugin_every_refusal_names_its_cause)
{
	smarm_plugin_t *pl = NULL;
	ck_assert_int_eq(
		smarm_plugin_open("/nonexistent/x.so", &pl, msg, sizeof msg),
		SMARM_EPLUGINOPEN);
	ck_assert_ptr_nonnull(strstr(msg, "/nonexistent/x.so"));
	ck_assert_int_eq(smarm_plugin_open(getenv("SMARM_TEST_NOT_SO"), &pl,
					   msg, sizeof msg),
			 SMARM_EPLUGINOPEN);
	refused("noentry", SMARM_ENOENTRY, "no symbol smarm_plugin_entry");
	refused("nullentry", SMARM_ENOENTRY, "returned NULL");
	refused("major", SMARM_EPLUGINABI, "built for plugin ABI 2.0");
	refused("minor", SMARM_EPLUGINABI, "built for plugin ABI 1.1");
	refused("smalldesc", SMARM_ESTRUCTSIZE, "descriptor struct_size 8");
	refused("smallgs", SMARM_ESTRUCTSIZE, "server 0: struct_size 16");
	refused("proto", SMARM_EPROTOCOL,
		"behaviour 'one': protocol line 2, column 11: expected a type");
	refused("nohandler", SMARM_ENOHANDLER,
		"operation 'poke' (line 2) has no handler");
	refused("extrahandler", SMARM_ENOHANDLER,
		"names no operation ('nosuchop')");
	refused("dupname", SMARM_EDUPNAME, "two behaviours named 'one'");
	refused("machine", SMARM_EPROTOCOL, "state_names is NULL");
	refused("nocreate", SMARM_EINVAL,
		"behaviour 'one': create is NULL (a gen_server needs one");
	/* a message cut to its buffer, and none at all */
	char small[8];
	ck_assert_int_eq(
		smarm_plugin_open(bad("major"), &pl, small, sizeof small),
		SMARM_EPLUGINABI);
	ck_assert_uint_eq(strlen(small), sizeof small - 1);
	ck_assert_int_eq(smarm_plugin_open(bad("major"), &pl, NULL, 0),
			 SMARM_EPLUGINABI);
}
END_TEST

/* dlopen is given only a path to a regular file: no FIFO (which would
 * block its read for ever), device, directory, "" or bare name. */
START_TEST(test_plugin_only_regular_files_by_path)
{
	char dir[] = "/tmp/smarm-plugin-test.XXXXXX";
	char fifo[64];
	smarm_plugin_t *pl = NULL;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof fifo, "%s/fifo.so", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(smarm_plugin_open(fifo, &pl, msg, sizeof msg),
			 SMARM_EPLUGINOPEN);
	ck_assert_msg(strstr(msg, fifo) != NULL && strstr(msg, "a FIFO"), "%s",
		      msg);
	ck_assert_int_eq(smarm_plugin_open("/dev/zero", &pl, msg, sizeof msg),
			 SMARM_EPLUGINOPEN);
	ck_assert_msg(strstr(msg, "/dev/zero: not a regular file (a "
				  "character device)") != NULL,
		      "%s", msg);
	ck_assert_int_eq(smarm_plugin_open(dir, &pl, msg, sizeof msg),
			 SMARM_EPLUGINOPEN);
	ck_assert_msg(strstr(msg, "a directory") != NULL, "%s", msg);
	ck_assert_int_eq(smarm_plugin_open("", &pl, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_msg(strstr(msg, "empty path") != NULL, "%s", msg);
	ck_assert_int_eq(smarm_plugin_open("libc.so.6", &pl, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_msg(strstr(msg, "'libc.so.6' is a bare name") != NULL, "%s",
		      msg);
	unlink(fifo);
	rmdir(dir);
}
END_TEST

/* Copy the good plugin to dir/name with mode; returns the path. */
static const char *copy_good(const char *dir, const char *name, mode_t mode)
{
	static char to[4096];
	char cmd[8192];
	/* Paths that do not fit fail the test, never run cut short. */
	ck_assert_int_lt(snprintf(to, sizeof to, "%s/%s", dir, name),
			 (int)sizeof to);
	ck_assert_int_lt(
		snprintf(cmd, sizeof cmd, "cp '%s' '%s'", bad("good"), to),
		(int)sizeof cmd);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(chmod(to, mode), 0);
	return to;
}

/*
 * smarm_plugin_check_fd checks the file that was opened: its own owner
 * and mode as opened, whatever now has its name; a name that leads to
 * another file since is refused (the directories checked would be that
 * other file's).
 */
START_TEST(test_plugin_check_fd_checks_the_open_file)
{
	char dir[] = "/tmp/smarm-plugin-fd.XXXXXX";
	char good[64], ww[64], sub[96];
	int fd, fd2;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(good, sizeof good, "%s", copy_good(dir, "good.so", 0644));
	snprintf(ww, sizeof ww, "%s", copy_good(dir, "ww.so", 0666));
	fd = open(good, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(smarm_plugin_check_fd(fd, good, 0, msg, sizeof msg),
			 0);
	/* the world-writable file as opened, though its name now leads to
	 * the trusted one: refused for what was opened */
	fd2 = open(ww, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd2, 0);
	ck_assert_int_eq(unlink(ww), 0);
	ck_assert_int_eq(link(good, ww), 0);
	ck_assert_int_eq(smarm_plugin_check_fd(fd2, ww, 0, msg, sizeof msg),
			 SMARM_EPLUGINPERM);
	ck_assert_msg(strstr(msg, ww) && strstr(msg, "writable by anyone"),
		      "%s", msg);
	ck_assert_int_eq(smarm_plugin_check_fd(fd2, ww,
					       SMARM_PLUGIN_ALLOW_INSECURE, msg,
					       sizeof msg),
			 0);
	close(fd2);
	/* a trusted open file whose name now leads elsewhere */
	snprintf(sub, sizeof sub, "%s/other.so", dir);
	ck_assert_int_eq(rename(good, sub), 0);
	ck_assert_int_eq(symlink("other.so", good), 0);
	ck_assert_int_eq(smarm_plugin_check_fd(fd, good, 0, msg, sizeof msg),
			 0); /* the link leads to the same file */
	ck_assert_int_eq(unlink(good), 0);
	snprintf(sub, sizeof sub, "%s", copy_good(dir, "good.so", 0644));
	ck_assert_int_eq(smarm_plugin_check_fd(fd, good, 0, msg, sizeof msg),
			 SMARM_EPLUGINOPEN);
	ck_assert_msg(strstr(msg, "no longer names the file"), "%s", msg);
	ck_assert_int_eq(unlink(good), 0);
	ck_assert_int_eq(smarm_plugin_check_fd(fd, good, 0, msg, sizeof msg),
			 SMARM_EPLUGINOPEN); /* no name at all */
	close(fd);
	/* a FIFO, opened without blocking */
	snprintf(sub, sizeof sub, "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(sub, 0600), 0);
	fd = open(sub, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(smarm_plugin_check_fd(fd, sub,
					       SMARM_PLUGIN_ALLOW_INSECURE, msg,
					       sizeof msg),
			 SMARM_EPLUGINOPEN);
	ck_assert_msg(strstr(msg, "not a regular file (a FIFO)"), "%s", msg);
	close(fd);
	/* misuse, and a descriptor that is not open */
	ck_assert_int_eq(smarm_plugin_check_fd(-1, ww, 0, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_check_fd(0, "", 0, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_check_fd(0, ww, 2, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_check_fd(fd, ww, 0, msg, sizeof msg),
			 SMARM_EBADF);
	snprintf(sub, sizeof sub, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(sub), 0);
}
END_TEST

/* A plugin is code: one that another user could change is refused
 * unless the caller allows it. */
START_TEST(test_plugin_insecure_files_are_refused)
{
	char dir[] = "/tmp/smarm-plugin-trust.XXXXXX";
	char sub[64];
	smarm_plugin_t *pl = NULL;
	const char *p;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* ours, 0755, in a 0700 directory under sticky /tmp: loads */
	p = copy_good(dir, "ok.so", 0755);
	ck_assert_int_eq(smarm_plugin_open(p, &pl, msg, sizeof msg), 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
	ck_assert_int_eq(smarm_plugin_check_path(p, 0, msg, sizeof msg), 0);
	/* world- and group-writable files */
	p = copy_good(dir, "ww.so", 0757);
	ck_assert_int_eq(smarm_plugin_open(p, &pl, msg, sizeof msg),
			 SMARM_EPLUGINPERM);
	ck_assert_msg(strstr(msg, p) && strstr(msg, "writable by anyone"), "%s",
		      msg);
	ck_assert_int_eq(smarm_plugin_check_path(p, 0, msg, sizeof msg),
			 SMARM_EPLUGINPERM);
	ck_assert_int_eq(smarm_plugin_open_flags(p, SMARM_PLUGIN_ALLOW_INSECURE,
						 &pl, msg, sizeof msg),
			 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
	/* group write: harmless for root's group (and for one's private
	 * group), not for another (only root can hand a file to one) */
	p = copy_good(dir, "gw.so", 0775);
	if (geteuid() == 0) {
		ck_assert_int_eq(smarm_plugin_open(p, &pl, msg, sizeof msg), 0);
		ck_assert_int_eq(smarm_plugin_close(pl), 0);
		ck_assert_int_eq(chown(p, (uid_t)-1, 65534), 0);
		ck_assert_int_eq(smarm_plugin_open(p, &pl, msg, sizeof msg),
				 SMARM_EPLUGINPERM);
		ck_assert_msg(strstr(msg, "writable by its group"), "%s", msg);
	}
	/* a directory others may write into, sticky or not */
	snprintf(sub, sizeof sub, "%s/open", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	p = copy_good(sub, "p.so", 0755);
	ck_assert_int_eq(chmod(sub, 0777), 0);
	ck_assert_int_eq(smarm_plugin_open(p, &pl, msg, sizeof msg),
			 SMARM_EPLUGINPERM);
	ck_assert_msg(strstr(msg, "its directory") && strstr(msg, sub) &&
			      strstr(msg, "not sticky"),
		      "%s", msg);
	ck_assert_int_eq(chmod(sub, 01777), 0); /* like /tmp */
	ck_assert_int_eq(smarm_plugin_open(p, &pl, msg, sizeof msg), 0);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
	/* owned by another user (only root can make one) */
	if (geteuid() == 0) {
		p = copy_good(dir, "other.so", 0755);
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(smarm_plugin_open(p, &pl, msg, sizeof msg),
				 SMARM_EPLUGINPERM);
		ck_assert_msg(strstr(msg, "owned by uid 65534"), "%s", msg);
	}
	/* misuse */
	ck_assert_int_eq(smarm_plugin_check_path("", 0, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_check_path(p, 2, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_open_flags(p, 4, &pl, msg, sizeof msg),
			 SMARM_EINVAL);
	snprintf(sub, sizeof sub, "rm -rf '%s'", dir);
	ck_assert_int_eq(system(sub), 0);
}
END_TEST

START_TEST(test_plugin_misuse_is_einval)
{
	smarm_plugin_t *pl = NULL;
	const smarm_behaviour_t *be = NULL;
	ck_assert_int_eq(smarm_plugin_open(NULL, &pl, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_open(bad("good"), NULL, msg, sizeof msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_close(NULL), SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_close((smarm_plugin_t *)msg),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_open(bad("good"), &pl, NULL, 0), 0);
	ck_assert_int_eq(smarm_plugin_behaviour(NULL, "one", &be),
			 SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, NULL, &be), SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_behaviour(pl, "one", NULL), SMARM_EINVAL);
	ck_assert_int_eq(
		smarm_plugin_behaviour((smarm_plugin_t *)msg, "one", &be),
		SMARM_EINVAL);
	ck_assert_int_eq(smarm_plugin_close(pl), 0);
}
END_TEST

START_TEST(test_plugin_shipped_plugins_load)
{
	static const char *const names[][2] = {
		{ "SMARM_TEST_COUNTER", "counter" },
		{ "SMARM_TEST_KV", "kv" },
		{ "SMARM_TEST_CRASHER", "crasher" },
	};
	for (size_t i = 0; i < 3; i++) {
		smarm_plugin_t *pl = NULL;
		const smarm_behaviour_t *be = NULL;
		ck_assert_int_eq(smarm_plugin_open(getenv(names[i][0]), &pl,
						   msg, sizeof msg),
				 0);
		ck_assert_int_eq(smarm_plugin_behaviour(pl, names[i][1], &be),
				 0);
		ck_assert_int_eq(smarm_plugin_close(pl), 0);
	}
}
END_TEST

/*
 * What SMARM_PLUGIN_DEFINE_SERVERS (bad_good, counter),
 * SMARM_PLUGIN_DEFINE_MACHINES (door) and SMARM_PLUGIN_DEFINE (bad_machine)
 * made, read through the entry itself: this header's version and size,
 * the counts of the arrays, NULL and 0 for the kind left out; NULL for
 * a host of another major, the descriptor for any minor.
 */
static void check_defined(const char *so, const char *name, size_t n_servers,
			  size_t n_machines)
{
	void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	smarm_plugin_entry_fn entry;
	const smarm_plugin_desc_t *d;
	ck_assert_msg(dl != NULL, "%s: %s", so, dlerror());
	*(void **)&entry = dlsym(dl, SMARM_PLUGIN_ENTRY_NAME);
	ck_assert_ptr_nonnull(entry);
	ck_assert_ptr_null(entry(SMARM_PLUGIN_ABI_MAJOR + 1, 0));
	ck_assert_ptr_null(entry(0, SMARM_PLUGIN_ABI_MINOR));
	ck_assert_ptr_eq(
		entry(SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MINOR + 1),
		entry(SMARM_PLUGIN_ABI_MAJOR, 0));
	d = entry(SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MINOR);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(d->abi_major, SMARM_PLUGIN_ABI_MAJOR);
	ck_assert_uint_eq(d->abi_minor, SMARM_PLUGIN_ABI_MINOR);
	ck_assert_uint_eq(d->struct_size, sizeof(smarm_plugin_desc_t));
	ck_assert_str_eq(d->name, name);
	ck_assert_uint_eq(d->n_servers, n_servers);
	ck_assert_uint_eq(d->n_machines, n_machines);
	ck_assert(n_servers > 0 ? d->servers != NULL : d->servers == NULL);
	ck_assert(n_machines > 0 ? d->machines != NULL : d->machines == NULL);
	for (size_t i = 0; i < n_servers; i++)
		ck_assert_ptr_nonnull(d->servers[i]);
	for (size_t i = 0; i < n_machines; i++)
		ck_assert_ptr_nonnull(d->machines[i]);
	for (size_t i = 0; i < sizeof d->reserved / sizeof d->reserved[0]; i++)
		ck_assert_ptr_null(d->reserved[i]);
	dlclose(dl);
}

START_TEST(test_plugin_define_makes_the_descriptor_and_entry)
{
	check_defined(bad("good"), "bad", 1, 0);
	check_defined(getenv("SMARM_TEST_COUNTER"), "counter", 1, 0);
	check_defined(getenv("SMARM_TEST_DOOR"), "door", 0, 1);
	check_defined(bad("machine"), "bad", 1, 1);
	/* the two-kind plugin's refusal is its broken machine's */
	refused("machine", SMARM_EPROTOCOL, "state_names is NULL");
}
END_TEST

Suite *smarm_test_plugin_suite(void)
{
	Suite *s = suite_create("plugin");
	TCase *tc = tcase_create("open");
	tcase_add_test(tc, test_plugin_good_opens_twice_as_one);
	tcase_add_test(tc, test_plugin_short_descriptors_load);
	tcase_add_test(tc, test_plugin_every_refusal_names_its_cause);
	tcase_add_test(tc, test_plugin_only_regular_files_by_path);
	tcase_add_test(tc, test_plugin_insecure_files_are_refused);
	tcase_add_test(tc, test_plugin_check_fd_checks_the_open_file);
	tcase_add_test(tc, test_plugin_misuse_is_einval);
	tcase_add_test(tc, test_plugin_shipped_plugins_load);
	tcase_add_test(tc, test_plugin_define_makes_the_descriptor_and_entry);
	suite_add_tcase(s, tc);
	return s;
}

SMARM_TEST_MAIN(plugin)

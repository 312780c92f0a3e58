/* SPDX-License-Identifier: MIT */
/*
 * plugin.c - the plugin loader: dlopen(3) a plugin, check its descriptor
 * (ABI, struct sizes), parse each behaviour's protocol, match handlers
 * to operations, prepare each operation's libffi call interface, and
 * keep the object mapped while anything can still reach its code. A
 * refusal is reported to the logger of the asking actor's node.
 *
 * Lifetime: pl_refs counts each host open (pl_opens counts those), each
 * running server of its behaviours, each envelope, reply token and
 * timer. The last reference unloads it: out of the table, its text's
 * preemption allowance ended, its stubs freed, then dlclose; so no code
 * of it runs after dlclose.
 *
 *   OPENING --(checks pass)--> OPEN (pl_opens > 0, in the table)
 *   OPEN --(close: pl_opens 0, refs left)--> HELD (in the table: a
 *         new open of the same object revives it)
 *   OPEN/HELD --(last reference)--> unloaded (freed)
 *
 * Ownership: struct bhv_plugin and its behaviours are malloc'd here and
 * freed by the last unref. A behaviour descriptor (the plugin's const
 * data) is copied up to its struct_size, the rest zeroed, so an older
 * minor's reads as the current struct with its newer fields defaulted.
 * Locking: plugins_lock (process-wide, like dlopen; never held while
 * plugin code runs, taken inside no runtime lock) guards the table
 * (pl_next), pl_opens and pl_stubs. pl_refs is atomic.
 * Invariants: INV-1 a plugin in the table has pl_refs > 0. INV-2
 * pl_refs >= pl_opens. INV-3 a plugin's behaviours (pl_beh, pl_nbeh,
 * protocols, descriptor copies) are constant once it is in the table.
 * INV-4 pl_refs reaches 0 once, and only then is the object unloaded.
 * INV-5 a loaded gen_server behaviour has a create (the engine calls it
 * unchecked; it checks every other callback, and a gen_statem's create
 * may be NULL). INV-6 dlopen is only given a path (holding a '/') to a
 * regular file (check_file). INV-7 a loaded plugin binds to this
 * runtime, never a second copy (check_one_runtime). INV-8 unless the
 * caller passes SMARM_PLUGIN_ALLOW_INSECURE, a loaded file and each
 * directory on its real path is owned by the caller or root and
 * writable by no one else, sticky directories aside (check_trust);
 * smarm_plugin_check_fd applies the file's half to the open file and
 * the directories' half to those above its name's real path, which must
 * still be the opened file.
 * See: docs/plugins.md, docs/architecture/behaviours.md.
 */
#include "bhv.h"

#include "../arch/arch.h"
#include "../core/fault.h"
#include "../core/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void stub_free(struct bhv_stub *st);

struct bhv_plugin {
	struct bhv_plugin *pl_next;	    /* the table (plugins_lock) */
	atomic_long pl_refs;		    /* every reference (INV-2) */
	long pl_opens;			    /* host opens (plugins_lock) */
	void *pl_dl;			    /* dlopen's handle */
	const void *pl_text;		    /* an address in its text */
	bool pl_allowed;		    /* pl_text allowed for preemption */
	const smarm_plugin_desc_t *pl_desc; /* what the entry returned */
	size_t pl_nbeh;			    /* behaviours */
	struct smarm_behaviour *pl_beh;	    /* pl_nbeh of them */
	struct bhv_stub *pl_stubs;	    /* closures (plugins_lock) */
};

static pthread_mutex_t plugins_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bhv_plugin *plugins; /* the table (plugins_lock) */

/* Write "fmt..." into msg (cut, NUL-terminated); return rc. */
__attribute__((format(printf, 4, 5))) static int
say(int rc, char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;
	if (msg == NULL || msglen == 0)
		return rc;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return rc;
}

/* The minimum sizes ABI 1.0 requires: every field before reserved as it
 * began (format_status later took the first reserved word). */
#define DESC_MIN offsetof(smarm_plugin_desc_t, reserved)
#define GS_MIN offsetof(smarm_gs_desc_t, format_status)
#define SM_MIN offsetof(smarm_sm_desc_t, format_status)

static void behaviours_free(struct bhv_plugin *pl)
{
	for (size_t i = 0; i < pl->pl_nbeh; i++) {
		struct smarm_behaviour *b = &pl->pl_beh[i];
		if (b->bh_engine_free != NULL)
			b->bh_engine_free(b->bh_engine);
		smarm__bhv_proto_free(&b->bh_proto);
	}
	free(pl->pl_beh);
	pl->pl_beh = NULL;
	pl->pl_nbeh = 0;
}

/* Match gen_server b's handler table to its protocol (sets op_fn). */
static int match_handlers(struct smarm_behaviour *b, const char *path,
			  char *msg, size_t msglen)
{
	static ffi_type *lead[] = { &ffi_type_pointer, &ffi_type_pointer };
	const smarm_gs_desc_t *d = &b->bh_gs;
	struct bhv_proto *p = &b->bh_proto;

	if (d->n_handlers > 0 && d->handlers == NULL)
		return say(SMARM_EINVAL, msg, msglen,
			   "%s: behaviour '%s': handlers NULL, n_handlers %zu",
			   path, b->bh_name, d->n_handlers);
	for (size_t i = 0; i < d->n_handlers; i++) {
		const smarm_handler_t *h = &d->handlers[i];
		struct bhv_op *op = NULL;
		if (h->op != NULL)
			op = (struct bhv_op *)smarm__bhv_proto_find(p, h->op,
								    0);
		if (op == NULL)
			return say(SMARM_ENOHANDLER, msg, msglen,
				   "%s: behaviour '%s': handler %zu names no "
				   "operation ('%s')",
				   path, b->bh_name, i,
				   h->op != NULL ? h->op : "(null)");
		if (h->fn == NULL || op->op_fn != NULL)
			return say(SMARM_ENOHANDLER, msg, msglen,
				   "%s: behaviour '%s': operation '%s' has %s "
				   "handler",
				   path, b->bh_name, op->op_name,
				   h->fn == NULL ? "a NULL" : "a second");
		op->op_fn = h->fn;
	}
	for (size_t i = 0; i < p->pr_n; i++) {
		struct bhv_op *op = &p->pr_ops[i];
		if (op->op_fn == NULL)
			return say(SMARM_ENOHANDLER, msg, msglen,
				   "%s: behaviour '%s': operation '%s' "
				   "(line %u) has no handler",
				   path, b->bh_name, op->op_name, op->op_line);
		if (smarm__bhv_cif_prep(&op->op_cif, op, lead, 2, NULL) != 0)
			return say(SMARM_EINTERNAL, msg, msglen,
				   "%s: behaviour '%s': libffi refused "
				   "operation '%s'",
				   path, b->bh_name, op->op_name);
	}
	return 0;
}

static int name_ok(const char *name)
{
	size_t n;
	if (name == NULL)
		return 0;
	n = strnlen(name, SMARM_OP_NAME_MAX + 1);
	return n > 0 && n <= SMARM_OP_NAME_MAX;
}

/* Check pl's descriptor and build its behaviours. */
static int load_behaviours(struct bhv_plugin *pl, const char *path, char *msg,
			   size_t msglen)
{
	const smarm_plugin_desc_t *d = pl->pl_desc;
	size_t n = d->n_servers + d->n_machines;
	int rc;

	if ((d->n_servers > 0 && d->servers == NULL) ||
	    (d->n_machines > 0 && d->machines == NULL) ||
	    d->n_servers > SIZE_MAX / 4 || d->n_machines > SIZE_MAX / 4)
		return say(SMARM_EINVAL, msg, msglen,
			   "%s: a behaviour list is NULL with a count", path);
	pl->pl_beh = calloc(n ? n : 1, sizeof *pl->pl_beh);
	if (pl->pl_beh == NULL)
		return SMARM_ENOMEM;
	pl->pl_nbeh = n; /* zeroed: behaviours_free copes with any prefix */
	for (size_t i = 0; i < n; i++) {
		struct smarm_behaviour *b = &pl->pl_beh[i];
		bool gs = i < d->n_servers;
		const char *what = gs ? "server" : "machine";
		size_t at = gs ? i : i - d->n_servers; /* in its list */
		const smarm_gs_desc_t *g = gs ? d->servers[at] : NULL;
		const smarm_sm_desc_t *m = gs ? NULL : d->machines[at];
		uint32_t size;
		const char *name, *proto;
		char pmsg[160];

		b->bh_pl = pl;
		b->bh_kind = gs ? BHV_GEN_SERVER : BHV_GEN_STATEM;
		if (gs ? g == NULL : m == NULL)
			return say(SMARM_EINVAL, msg, msglen,
				   "%s: %s %zu is NULL", path, what, at);
		size = gs ? g->struct_size : m->struct_size;
		if (size < (gs ? GS_MIN : SM_MIN))
			return say(SMARM_ESTRUCTSIZE, msg, msglen,
				   "%s: %s %zu: struct_size %u, ABI %d.%d "
				   "needs %zu",
				   path, what, at, size, SMARM_PLUGIN_ABI_MAJOR,
				   SMARM_PLUGIN_ABI_MINOR,
				   gs ? GS_MIN : SM_MIN);
		name = gs ? g->name : m->name;
		proto = gs ? g->protocol : m->protocol;
		if (!name_ok(name))
			return say(SMARM_EINVAL, msg, msglen,
				   "%s: %s %zu: name NULL, empty or longer "
				   "than %d bytes",
				   path, what, at, SMARM_OP_NAME_MAX);
		b->bh_name = name;
		for (size_t j = 0; j < i; j++)
			if (strcmp(pl->pl_beh[j].bh_name, name) == 0)
				return say(SMARM_EDUPNAME, msg, msglen,
					   "%s: two behaviours named '%s'",
					   path, name);
		if (proto == NULL)
			return say(SMARM_EINVAL, msg, msglen,
				   "%s: behaviour '%s': protocol NULL", path,
				   name);
		rc = smarm__bhv_proto_parse(proto, &b->bh_proto, pmsg,
					    sizeof pmsg);
		if (rc == SMARM_EPROTOCOL)
			return say(rc, msg, msglen,
				   "%s: behaviour '%s': protocol %s", path,
				   name, pmsg);
		if (rc != 0)
			return rc;
		if (gs) {
			memcpy(&b->bh_gs, g,
			       size < sizeof *g ? size : sizeof *g);
			/* The engine calls create unchecked (INV-5). */
			if (b->bh_gs.create == NULL)
				return say(SMARM_EINVAL, msg, msglen,
					   "%s: behaviour '%s': create is NULL "
					   "(a gen_server needs one to make "
					   "its state)",
					   path, name);
			rc = match_handlers(b, path, msg, msglen);
		} else {
			/* Read no further than the plugin wrote. */
			memcpy(&b->bh_smd, m,
			       size < sizeof *m ? size : sizeof *m);
			b->bh_sm = &b->bh_smd;
			rc = smarm__sm_check(b->bh_sm, &b->bh_proto, pmsg,
					     sizeof pmsg);
			if (rc != 0)
				rc = say(rc, msg, msglen,
					 "%s: behaviour '%s': %s", path, name,
					 pmsg);
		}
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The last reference is gone: unload (INV-4). No lock held. */
static void plugin_unload(struct bhv_plugin *pl)
{
	struct bhv_plugin **pp;
	struct bhv_stub *st;

	pthread_mutex_lock(&plugins_lock);
	for (pp = &plugins; *pp != NULL; pp = &(*pp)->pl_next) {
		if (*pp == pl) {
			*pp = pl->pl_next;
			break;
		}
	}
	st = pl->pl_stubs;
	pl->pl_stubs = NULL;
	pthread_mutex_unlock(&plugins_lock);
	while (st != NULL) {
		struct bhv_stub *next = st->st_next;
		stub_free(st);
		st = next;
	}
	if (pl->pl_allowed)
		smarm_preempt_disallow_object(pl->pl_text);
	behaviours_free(pl);
	dlclose(pl->pl_dl);
	free(pl);
}

const char *smarm__bhv_plugin_name(const struct smarm_behaviour *b)
{
	const char *name = b->bh_pl->pl_desc->name;
	return name != NULL ? name : "?";
}

const void *smarm__bhv_plugin_text(const struct smarm_behaviour *b)
{
	return b->bh_pl->pl_text;
}

void smarm__bhv_plugin_ref(const struct smarm_behaviour *b)
{
	atomic_fetch_add_explicit(&b->bh_pl->pl_refs, 1, memory_order_relaxed);
}

static void plugin_unref(struct bhv_plugin *pl)
{
	if (atomic_fetch_sub_explicit(&pl->pl_refs, 1, memory_order_acq_rel) ==
	    1)
		plugin_unload(pl);
}

void smarm__bhv_plugin_unref(const struct smarm_behaviour *b)
{
	plugin_unref(b->bh_pl);
}

/* dlopen gets a file by a path (INV-6): "" would open the main program,
 * a bare name would search the library path. */
static int check_file(const char *path, char *msg, size_t msglen)
{
	if (path[0] == '\0')
		return say(SMARM_EINVAL, msg, msglen,
			   "empty path (dlopen would open the main program)");
	if (strchr(path, '/') == NULL)
		return say(SMARM_EINVAL, msg, msglen,
			   "'%s' is a bare name, which dlopen would look up "
			   "in the library path: give a path (./%s)",
			   path, path);
	return 0;
}

/*
 * Whether group write on st is harmless: the group is root's, or our
 * private one (our egid, named as we are, listing no member but us), as
 * a umask of 002 under user-private groups leaves every file. A shared
 * primary group lists none of its users, so the name must match too.
 */
static bool private_group(const struct stat *st)
{
	struct group gr;
	struct group *res = NULL;
	struct passwd pw;
	struct passwd *me = NULL;
	char buf[4096];
	char pbuf[1024];
	if (st->st_gid == 0)
		return true;
	if (st->st_gid != getegid() ||
	    getgrgid_r(st->st_gid, &gr, buf, sizeof buf, &res) != 0 ||
	    res == NULL)
		return false;
	if (getpwuid_r(geteuid(), &pw, pbuf, sizeof pbuf, &me) != 0 ||
	    me == NULL || strcmp(gr.gr_name, me->pw_name) != 0)
		return false;
	for (char **m = gr.gr_mem; *m != NULL; m++)
		if (strcmp(*m, me->pw_name) != 0)
			return false;
	return true;
}

/* Whether another user could write to st (see check_trust). */
static bool others_write(const struct stat *st)
{
	return (st->st_mode & S_IWOTH) ||
	       ((st->st_mode & S_IWGRP) && !private_group(st));
}

/* A stat(2) or realpath(3) (resolved: PATH_MAX bytes) that failed (!ok)
 * is SMARM_EPLUGINOPEN with "shown: why" in msg. */
static int sys_or_say(bool ok, const char *shown, char *msg, size_t msglen)
{
	if (ok)
		return 0;
	return say(SMARM_EPLUGINOPEN, msg, msglen, "%s: %s", shown,
		   strerror(errno));
}

/*
 * The trust model (INV-8): a file loaded as code and every directory on
 * its real path is owned by the caller (euid) or root and writable by no
 * one else: no world write bit, no group write bit unless the group is
 * root's or the caller's private one, except on a sticky directory
 * (/tmp), where others cannot rename or remove what the caller owns.
 * resolved is the real path, the one then loaded, so no symbolic link
 * can be pointed elsewhere after the check. trust_one checks one status
 * st: the file's (dir NULL; stat(2) or fstat(2)) or directory dir's.
 */
static int trust_one(const char *path, const char *dir, const struct stat *st,
		     char *msg, size_t msglen)
{
	const char *pre = dir != NULL ? "its directory " : "";
	const char *is = dir != NULL ? " is " : "";
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return say(SMARM_EPLUGINPERM, msg, msglen,
			   "%s: %s%s%sowned by uid %u, neither this user (uid "
			   "%u) nor root%s",
			   path, pre, dir != NULL ? dir : "", is,
			   (unsigned)st->st_uid, (unsigned)geteuid(),
			   dir != NULL
				   ? ""
				   : ": refusing code another user controls");
	if (others_write(st) && (dir == NULL || !(st->st_mode & S_ISVTX)))
		return say(SMARM_EPLUGINPERM, msg, msglen,
			   "%s: %s%s%swritable by %s (mode %04o)%s", path, pre,
			   dir != NULL ? dir : "", is,
			   st->st_mode & S_IWOTH ? "anyone" : "its group",
			   (unsigned)(st->st_mode & 07777),
			   dir != NULL ? " and not sticky: another user could "
					 "replace the file"
				       : ": refusing code another user could "
					 "change");
	return 0;
}

static int check_dir_trust(const char *path, const char *resolved, char *msg,
			   size_t msglen)
{
	char real[PATH_MAX];
	struct stat st;
	char *slash;
	int rc = 0;
	snprintf(real, sizeof real, "%s", resolved);
	while (rc == 0 && (slash = strrchr(real, '/')) != NULL) {
		if (slash == real)
			slash[1] = '\0'; /* "/" */
		else
			*slash = '\0';
		rc = sys_or_say(stat(real, &st) == 0, real, msg, msglen);
		if (rc == 0)
			rc = trust_one(path, real, &st, msg, msglen);
		if (strcmp(real, "/") == 0)
			break;
	}
	return rc;
}

/* Both halves of the trust model on the file at resolved. */
static int check_trust(const char *path, const char *resolved, char *msg,
		       size_t msglen)
{
	struct stat st;
	int rc = sys_or_say(stat(resolved, &st) == 0, path, msg, msglen);
	if (rc == 0)
		rc = trust_one(path, NULL, &st, msg, msglen);
	return rc != 0 ? rc : check_dir_trust(path, resolved, msg, msglen);
}

/* A regular file: a FIFO or a device would block a read for ever. */
static int check_regular(const char *path, const struct stat *st, char *msg,
			 size_t msglen)
{
	if (S_ISREG(st->st_mode))
		return 0;
	return say(SMARM_EPLUGINOPEN, msg, msglen,
		   "%s: not a regular file (%s)", path,
		   S_ISDIR(st->st_mode)	   ? "a directory"
		   : S_ISFIFO(st->st_mode) ? "a FIFO"
		   : S_ISCHR(st->st_mode)  ? "a character device"
		   : S_ISBLK(st->st_mode)  ? "a block device"
		   : S_ISSOCK(st->st_mode) ? "a socket"
					   : "not a file");
}

/* A regular file and, unless flags allow otherwise, one only we and root
 * control; its real path, to load, goes to resolved (PATH_MAX bytes). */
static int check_path(const char *path, unsigned flags, char *resolved,
		      char *msg, size_t msglen)
{
	struct stat st;
	int rc = sys_or_say(stat(path, &st) == 0, path, msg, msglen);
	if (rc == 0)
		rc = check_regular(path, &st, msg, msglen);
	if (rc == 0)
		rc = sys_or_say(realpath(path, resolved) != NULL, path, msg,
				msglen);
	if (rc != 0 || (flags & SMARM_PLUGIN_ALLOW_INSECURE))
		return rc;
	return check_trust(path, resolved, msg, msglen);
}

/* Clear msg; SMARM_EINVAL saying why if bad or flags are unknown. */
static int args_check(bool bad, unsigned flags, const char *why, char *msg,
		      size_t msglen)
{
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	if (bad || (flags & ~(unsigned)SMARM_PLUGIN_ALLOW_INSECURE) != 0)
		return say(SMARM_EINVAL, msg, msglen, "%s", why);
	return 0;
}

int smarm_plugin_check_path(const char *path, unsigned flags, char *msg,
			    size_t msglen)
{
	char resolved[PATH_MAX];
	int rc =
		args_check(path == NULL || path[0] == '\0', flags,
			   "path NULL or empty, or unknown flags", msg, msglen);
	return rc != 0 ? rc : check_path(path, flags, resolved, msg, msglen);
}

int smarm_plugin_check_fd(int fd, const char *path, unsigned flags, char *msg,
			  size_t msglen)
{
	char resolved[PATH_MAX];
	struct stat st;
	struct stat named;
	int rc = args_check(fd < 0 || path == NULL || path[0] == '\0', flags,
			    "fd negative, path NULL or empty, or unknown flags",
			    msg, msglen);
	if (rc != 0)
		return rc;
	if (fstat(fd, &st) != 0)
		return say(errno == EBADF ? SMARM_EBADF : SMARM_ESYSTEM, msg,
			   msglen, "%s: %s", path, strerror(errno));
	rc = check_regular(path, &st, msg, msglen);
	if (rc != 0 || (flags & SMARM_PLUGIN_ALLOW_INSECURE))
		return rc;
	/* The file's half on what was opened: no path is looked up again. */
	rc = trust_one(path, NULL, &st, msg, msglen);
	if (rc != 0)
		return rc;
	/* The directories' half: path must still name the opened file. */
	rc = sys_or_say(realpath(path, resolved) != NULL, path, msg, msglen);
	if (rc == 0)
		rc = sys_or_say(stat(resolved, &named) == 0, path, msg, msglen);
	if (rc != 0)
		return rc;
	if (named.st_dev != st.st_dev || named.st_ino != st.st_ino)
		return say(SMARM_EPLUGINOPEN, msg, msglen,
			   "%s: no longer names the file that was opened "
			   "(replaced since)",
			   path);
	return check_dir_trust(path, resolved, msg, msglen);
}

/*
 * One runtime per process (INV-7): a host that links libsmarm.a and
 * loads a plugin linked with -lsmarm gets a second runtime, with no node
 * and tables of its own, where every call the plugin makes would fail.
 */
static int check_one_runtime(void *dl, const char *path, char *msg,
			     size_t msglen)
{
	int (*self)(const char *, smarm_plugin_t **, char *, size_t) =
		smarm_plugin_open;
	void *ours = *(void **)&self;
	void *theirs = dlsym(dl, "smarm_plugin_open");
	Dl_info a, b;
	if (theirs == NULL || theirs == ours)
		return 0; /* it uses the host's runtime, or none */
	if (dladdr(ours, &a) == 0 || dladdr(theirs, &b) == 0 ||
	    a.dli_fbase == b.dli_fbase)
		return 0;
	return say(SMARM_EPLUGINLINK, msg, msglen,
		   "%s: brings a second copy of the runtime (%s) beside the "
		   "host's (%s): build the plugin without -lsmarm (its "
		   "smarm_* calls then bind to the host's runtime), and link "
		   "a host that uses libsmarm.a with -rdynamic",
		   path, b.dli_fname ? b.dli_fname : "?",
		   a.dli_fname ? a.dli_fname : "?");
}

/* Under plugins_lock: the plugin of dlopen handle dl, revived, or NULL. */
static struct bhv_plugin *find_open(void *dl)
{
	for (struct bhv_plugin *pl = plugins; pl != NULL; pl = pl->pl_next) {
		long r;
		if (pl->pl_dl != dl)
			continue;
		/* Take a reference only while one is held (INV-1, INV-4). */
		r = atomic_load_explicit(&pl->pl_refs, memory_order_relaxed);
		while (r > 0 &&
		       !atomic_compare_exchange_weak_explicit(
			       &pl->pl_refs, &r, r + 1, memory_order_relaxed,
			       memory_order_relaxed))
			;
		if (r > 0)
			return pl;
	}
	return NULL;
}

int smarm_plugin_open(const char *path, smarm_plugin_t **out, char *msg,
		      size_t msglen)
{
	return smarm_plugin_open_flags(path, 0, out, msg, msglen);
}

static int plugin_open(const char *path, unsigned flags, smarm_plugin_t **out,
		       char *msg, size_t msglen);

/* A refusal is reported (SMARM_REPORT_PLUGIN) to the asking actor's
 * node with the caller's message; a plain thread has no node to tell. */
int smarm_plugin_open_flags(const char *path, unsigned flags,
			    smarm_plugin_t **out, char *msg, size_t msglen)
{
	char why[SMARM_LOG_LINE_MAX];
	char code[64];
	int rc = plugin_open(path, flags, out, why, sizeof why);
	if (msg != NULL && msglen > 0)
		snprintf(msg, msglen, "%s", why);
	if (rc != 0)
		smarm__log_self(SMARM_LOG_ERROR, SMARM_REPORT_PLUGIN, "plugin",
				"refused '%s': %s, status %s",
				path != NULL ? path : "(null)", why,
				smarm__log_code(rc, code, sizeof code));
	return rc;
}

static int plugin_open(const char *path, unsigned flags, smarm_plugin_t **out,
		       char *msg, size_t msglen)
{
	struct bhv_plugin *pl = NULL, *old;
	smarm_plugin_entry_fn entry;
	const smarm_plugin_desc_t *d;
	char resolved[PATH_MAX];
	void *dl;
	int rc;

	rc = args_check(path == NULL || out == NULL, flags,
			"path or out NULL, or unknown flags", msg, msglen);
	if (rc == 0)
		rc = check_file(path, msg, msglen);
	if (rc == 0)
		rc = check_path(path, flags, resolved, msg, msglen);
	if (rc != 0)
		return rc;
	/* The real path checked, not path again (check_trust). */
	dl = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		const char *e = dlerror();
		return say(SMARM_EPLUGINOPEN, msg, msglen, "%s",
			   e != NULL ? e : path);
	}
	pthread_mutex_lock(&plugins_lock);
	old = find_open(dl);
	if (old != NULL)
		old->pl_opens++;
	pthread_mutex_unlock(&plugins_lock);
	if (old != NULL) {
		dlclose(dl); /* the table's plugin holds the object */
		*out = (smarm_plugin_t *)old;
		return 0;
	}
	rc = check_one_runtime(dl, path, msg, msglen);
	if (rc != 0)
		goto out_dlclose;
	*(void **)&entry = dlsym(dl, SMARM_PLUGIN_ENTRY_NAME);
	d = entry != NULL
		    ? entry(SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MINOR)
		    : NULL;
	/* Each refusal reads the descriptor before the object goes. */
	if (entry == NULL)
		rc = say(SMARM_ENOENTRY, msg, msglen, "%s: no symbol %s", path,
			 SMARM_PLUGIN_ENTRY_NAME);
	else if (d == NULL)
		rc = say(SMARM_ENOENTRY, msg, msglen,
			 "%s: %s returned NULL (refused this host)", path,
			 SMARM_PLUGIN_ENTRY_NAME);
	else if (d->abi_major != SMARM_PLUGIN_ABI_MAJOR ||
		 d->abi_minor > SMARM_PLUGIN_ABI_MINOR)
		rc = say(SMARM_EPLUGINABI, msg, msglen,
			 "%s: built for plugin ABI %u.%u, this runtime "
			 "serves %d.0 to %d.%d",
			 path, d->abi_major, d->abi_minor,
			 SMARM_PLUGIN_ABI_MAJOR, SMARM_PLUGIN_ABI_MAJOR,
			 SMARM_PLUGIN_ABI_MINOR);
	else if (d->struct_size < DESC_MIN)
		rc = say(SMARM_ESTRUCTSIZE, msg, msglen,
			 "%s: descriptor struct_size %u, ABI %u.%u needs %zu",
			 path, d->struct_size, d->abi_major, d->abi_minor,
			 DESC_MIN);
	else if ((pl = calloc(1, sizeof *pl)) == NULL)
		rc = SMARM_ENOMEM;
	if (rc != 0)
		goto out_dlclose;
	pl->pl_dl = dl;
	pl->pl_desc = d;
	pl->pl_text = *(const void **)&entry;
	atomic_init(&pl->pl_refs, 1);
	pl->pl_opens = 1;
	rc = load_behaviours(pl, path, msg, msglen);
	if (rc != 0)
		goto out_free_pl;
	pl->pl_allowed = smarm_preempt_allow_object(pl->pl_text) == 0;
	pthread_mutex_lock(&plugins_lock);
	/* Another thread may have opened the same object meanwhile. */
	old = find_open(dl);
	if (old != NULL) {
		old->pl_opens++;
	} else {
		pl->pl_next = plugins;
		plugins = pl;
	}
	pthread_mutex_unlock(&plugins_lock);
	*out = (smarm_plugin_t *)(old != NULL ? old : pl);
	if (old == NULL)
		return 0;
	/* Ours was never published: unload it (keep the allowance, a set
	 * membership the table's plugin shares). */
out_free_pl:
	behaviours_free(pl);
	free(pl);
out_dlclose:
	dlclose(dl);
	return rc;
}

/* Under plugins_lock: is p an open plugin? */
static bool is_open(const struct bhv_plugin *p)
{
	for (struct bhv_plugin *pl = plugins; pl != NULL; pl = pl->pl_next)
		if (pl == p)
			return pl->pl_opens > 0;
	return false;
}

int smarm_plugin_close(smarm_plugin_t *h)
{
	struct bhv_plugin *pl = (struct bhv_plugin *)h;
	if (pl == NULL)
		return SMARM_EINVAL;
	pthread_mutex_lock(&plugins_lock);
	if (!is_open(pl)) {
		pthread_mutex_unlock(&plugins_lock);
		return SMARM_EINVAL;
	}
	pl->pl_opens--;
	pthread_mutex_unlock(&plugins_lock);
	plugin_unref(pl);
	return 0;
}

/* pl's behaviour called name: 0, or SMARM_ENOBEHAVIOUR. */
static int beh_find(const struct bhv_plugin *pl, const char *name,
		    const struct smarm_behaviour **out)
{
	for (size_t i = 0; i < pl->pl_nbeh; i++) {
		if (strcmp(pl->pl_beh[i].bh_name, name) == 0) {
			*out = &pl->pl_beh[i];
			return 0;
		}
	}
	return SMARM_ENOBEHAVIOUR;
}

int smarm_plugin_behaviour(smarm_plugin_t *h, const char *name,
			   const smarm_behaviour_t **out)
{
	struct bhv_plugin *pl = (struct bhv_plugin *)h;
	int rc;
	if (pl == NULL || name == NULL || out == NULL)
		return SMARM_EINVAL;
	pthread_mutex_lock(&plugins_lock);
	rc = is_open(pl) ? beh_find(pl, name, out) : SMARM_EINVAL;
	pthread_mutex_unlock(&plugins_lock);
	return rc;
}

uint64_t smarm__bhv_text_faults(const void *text)
{
	return smarm__fault_count_of(text);
}

int smarm_plugin_faults(smarm_plugin_t *h, uint64_t *out)
{
	struct bhv_plugin *pl = (struct bhv_plugin *)h;
	const void *text = NULL;
	if (pl == NULL || out == NULL)
		return SMARM_EINVAL;
	pthread_mutex_lock(&plugins_lock);
	if (is_open(pl))
		text = pl->pl_text;
	pthread_mutex_unlock(&plugins_lock);
	if (text == NULL)
		return SMARM_EINVAL;
	*out = smarm__bhv_text_faults(text);
	return 0;
}

int smarm__bhv_sibling(const struct smarm_behaviour *b, const char *name,
		       const struct smarm_behaviour **out)
{
	const struct bhv_plugin *pl = b->bh_pl;
	if (name == NULL) {
		*out = b;
		return 0;
	}
	/* The caller's reference keeps pl_beh constant (INV-3). */
	return beh_find(pl, name, out);
}

bool smarm__bhv_valid(const struct smarm_behaviour *b)
{
	bool ok = false;
	if (b == NULL)
		return false;
	pthread_mutex_lock(&plugins_lock);
	for (struct bhv_plugin *pl = plugins; pl != NULL && !ok;
	     pl = pl->pl_next)
		ok = b >= pl->pl_beh && b < pl->pl_beh + pl->pl_nbeh &&
		     atomic_load_explicit(&pl->pl_refs, memory_order_relaxed) >
			     0;
	pthread_mutex_unlock(&plugins_lock);
	return ok;
}

/*
 * Typed stubs: a C function pointer of the operation's own type
 * (smarm_server_stub) landing in its body (gen_server_api.c, stub_fun)
 * with libffi's closure convention (an array of argument pointers).
 * Most stubs are arch.h's register-saving thunks, whose thunk_call
 * points at each argument where the SysV ABI put it by a plan made once
 * per stub (st_loc): a libffi closure classified every argument at every
 * call, 540 instructions of a gen_server call's 2,240. A stub the plan
 * does not cover (an aggregate other than a pid), or made when every
 * thunk is taken, is a libffi closure. Stubs live until their plugin
 * unloads; one operation's stub is made once.
 */
static struct bhv_stub *_Atomic thunk_stubs[SMARM__THUNKS]; /* plugins_lock
							       writes */

static uint64_t thunk_call(uint32_t i, const struct smarm__thunk_regs *r,
			   const uint64_t *stack)
{
	struct bhv_stub *st =
		atomic_load_explicit(&thunk_stubs[i], memory_order_acquire);
	void *av[BHV_FFI_ARGS_MAX];
	ffi_sarg ret = SMARM_EINVAL;
	if (st == NULL) /* its plugin is gone: a caller's use after free */
		return (uint64_t)ret;
	for (unsigned k = 0; k < st->st_cif.bc_nffi; k++) {
		unsigned l = st->st_loc[k];
		av[k] = l < 6	 ? (void *)&r->gpr[l]
			: l < 14 ? (void *)&r->xmm[l - 6]
				 : (void *)&stack[l - 14];
	}
	st->st_fun(NULL, &ret, av, st);
	return (uint64_t)ret;
}

/* Plan where each of st's parameters arrives at a thunk: false if one is
 * an aggregate the plan does not classify (SysV's classes). */
static bool thunk_plan(struct bhv_stub *st)
{
	unsigned gpr = 0, xmm = 0, slot = 0;
	for (unsigned k = 0; k < st->st_cif.bc_nffi; k++) {
		const ffi_type *t = st->st_cif.bc_types[k];
		bool vec =
			t->type == FFI_TYPE_FLOAT || t->type == FFI_TYPE_DOUBLE;
		if (t->type == FFI_TYPE_STRUCT && t != &smarm__bhv_pid_ffi)
			return false; /* a pid is one INTEGER eightbyte */
		if (t->type == FFI_TYPE_LONGDOUBLE || slot + 14 > UINT8_MAX)
			return false;
		if (vec && xmm < 8)
			st->st_loc[k] = (uint8_t)(6 + xmm++);
		else if (!vec && gpr < 6)
			st->st_loc[k] = (uint8_t)gpr++;
		else
			st->st_loc[k] = (uint8_t)(14 + slot++);
	}
	return true;
}

/* Under plugins_lock: give st a free thunk, if it can use one. */
static bool thunk_bind(struct bhv_stub *st)
{
	if (!thunk_plan(st))
		return false;
	smarm__thunk_handler = thunk_call; /* the same value every time */
	for (int i = 0; i < SMARM__THUNKS; i++) {
		if (atomic_load_explicit(&thunk_stubs[i],
					 memory_order_relaxed) != NULL)
			continue;
		st->st_thunk = i;
		st->st_fn = smarm__thunk_addr((uint32_t)i);
		atomic_store_explicit(&thunk_stubs[i], st,
				      memory_order_release);
		return true;
	}
	return false;
}

static void stub_free(struct bhv_stub *st)
{
	if (st->st_thunk >= 0)
		atomic_store_explicit(&thunk_stubs[st->st_thunk], NULL,
				      memory_order_release);
	if (st->st_closure != NULL)
		ffi_closure_free(st->st_closure);
	free(st);
}

int smarm__bhv_stub_add(const struct smarm_behaviour *b,
			const struct bhv_op *op,
			void (*fun)(ffi_cif *, void *, void **, void *),
			void (**fn)(void))
{
	/* A call's stub: (server, timeout, out, args...); a cast's:
	 * (server, args...); both return an int status. */
	static ffi_type *lead[] = { &ffi_type_pointer, &ffi_type_uint64,
				    &ffi_type_pointer };
	unsigned nlead = op->op_kind == BHV_CALL ? 3 : 1;
	struct bhv_stub *st;
	void *code = NULL;
	int rc = 0;

	pthread_mutex_lock(&plugins_lock);
	for (st = b->bh_pl->pl_stubs; st != NULL; st = st->st_next)
		if (st->st_be == b && st->st_op == op && st->st_fun == fun)
			break;
	if (st != NULL) { /* made before: the same stub */
		*fn = st->st_fn;
		pthread_mutex_unlock(&plugins_lock);
		return 0;
	}
	st = calloc(1, sizeof *st);
	if (st == NULL) {
		rc = SMARM_ENOMEM;
		goto out;
	}
	st->st_be = b;
	st->st_op = op;
	st->st_fun = fun;
	st->st_thunk = -1;
	if (smarm__bhv_cif_prep(&st->st_cif, op, lead, nlead,
				&ffi_type_sint32) != 0) {
		rc = SMARM_EINTERNAL;
		goto out;
	}
	if (!thunk_bind(st)) {
		st->st_closure = ffi_closure_alloc(sizeof(ffi_closure), &code);
		if (st->st_closure == NULL) {
			rc = SMARM_ENOMEM;
			goto out;
		}
		if (ffi_prep_closure_loc(st->st_closure, &st->st_cif.bc_cif,
					 fun, st, code) != FFI_OK) {
			rc = SMARM_EINTERNAL;
			goto out;
		}
		*(void **)&st->st_fn = code;
	}
	st->st_next = b->bh_pl->pl_stubs;
	b->bh_pl->pl_stubs = st;
	*fn = st->st_fn;
	st = NULL;
out:
	if (st != NULL)
		stub_free(st);
	pthread_mutex_unlock(&plugins_lock);
	return rc;
}

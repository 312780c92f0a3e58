/* SPDX-License-Identifier: MIT */
/*
 * app.h - application files for smarm-run (docs/smarm-run.md): parse and
 * validate one into a tree (app_parse, app_read: app.c, which calls
 * nothing of the library), open its plugins and find its behaviours
 * (app_load), and turn the tree into supervisor specs (app_build: both
 * app_load.c). Tools code, not library API: it uses only the public
 * headers.
 *
 * Every failure writes one message, "file:line: text" or
 * "file:line:col: text", into the caller's buffer and returns -1.
 */
#ifndef SMARM_TOOLS_APP_H
#define SMARM_TOOLS_APP_H

#include <smarm/smarm.h>
#include <smarm/smarm_plugin.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Limits of the format (docs/smarm-run.md, "Limits"). */
#define APP_LINE_MAX 4096      /* bytes of one line, without its newline */
#define APP_FILE_MAX (1 << 20) /* bytes of one file */
#define APP_DEPTH_MAX 16       /* supervisors nested in one another */
#define APP_ALIAS_MAX SMARM_OP_NAME_MAX /* a plugin alias, an app name */
#define APP_ERR_MAX 512			/* a message, with its NUL */

enum app_kind {
	APP_SERVER = 1,
	APP_SUP = 2,
};

struct app_plugin {
	char ap_alias[APP_ALIAS_MAX + 1]; /* as declared */
	char *ap_path;			  /* as written */
	char *ap_resolved;		  /* against the file's directory */
	int ap_line;			  /* the plugin line */
	smarm_plugin_t *ap_pl;		  /* app_load's; NULL before */
};

/* A set of nodes keyed by their id or their name (app.c's, parsing). */
struct app_nset {
	struct app_node **s_slot; /* open addressing; NULL empty */
	size_t s_cap;		  /* a power of two, or 0 */
	size_t s_n;		  /* nodes in it */
};

struct app_node {
	int an_kind;			/* enum app_kind */
	int an_line, an_col;		/* where it was declared */
	char an_id[SMARM_NAME_MAX + 1]; /* child id in its parent */
	struct app_node *an_parent;	/* NULL: the root supervisor */
	size_t an_run; /* smarm-run's: its index in the launcher's table */
	/* APP_SERVER */
	size_t an_plugin;		    /* index in app.a_plugins */
	char an_bhv[SMARM_OP_NAME_MAX + 1]; /* behaviour name */
	char an_name[SMARM_NAME_MAX + 1];   /* registered name; "" none */
	char *an_args;			    /* start arguments; NULL none */
	int an_restart;			    /* smarm_sup_restart */
	uint64_t an_shutdown_ns;	    /* smarm_sup_spec_add_child's */
	uint64_t an_ready_ns;		    /* readiness bound */
	const smarm_behaviour_t *an_b;	    /* app_load's */
	/* APP_SUP */
	int an_strategy;	   /* smarm_sup_strategy */
	uint32_t an_max_restarts;  /* intensity */
	uint64_t an_period_ns;	   /* ... within this window */
	uint32_t an_fault_weight;  /* restarts a contained fault counts */
	struct app_node **an_kids; /* children, in start order */
	size_t an_nkids, an_capkids;
	int an_kid_indent;	   /* indentation of its children; -1 none */
	struct app_nset an_ids;	   /* its children by id (the parser's) */
	smarm_sup_spec_t *an_spec; /* app_build's; NULL before */
};

struct app {
	char *a_file;			/* the path as given */
	char *a_dir;			/* its directory */
	char a_name[APP_ALIAS_MAX + 1]; /* the app line's */
	uint64_t a_run_ns;		/* run line; 0: until a signal */
	int a_workers;			/* workers line; 0: default */
	struct app_plugin *a_plugins;
	size_t a_nplugins, a_capplugins;
	struct app_node *a_root;
	void (*a_release)(struct app *); /* app_load.c's; NULL: nothing */
	unsigned a_open_flags; /* smarm_plugin_open_flags'; the caller's */
};

/*
 * app_errf() - write "file:line:col: text" (no ":col" when col <= 0, no
 * ":line:col" when line <= 0) into buf, cut to len bytes with its NUL.
 * Returns -1, for "return app_errf(...)". app_verrf takes a va_list.
 */
int app_errf(const char *file, char *buf, size_t len, int line, int col,
	     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int app_verrf(const char *file, char *buf, size_t len, int line, int col,
	      const char *fmt, va_list ap);

/*
 * app_parse() - parse and validate len bytes of text read from file
 * (used for messages and to resolve relative plugin paths). *out
 * receives the app (free it with app_free). Returns 0, or -1 with err
 * set; also -1 for out of memory ("out of memory").
 */
int app_parse(const char *file, const char *text, size_t len, struct app **out,
	      char *err, size_t errlen);

/* app_read() - read file (at most APP_FILE_MAX bytes) and parse it. */
int app_read(const char *file, struct app **out, char *err, size_t errlen);

/* app_read_fd() - app_read of the open file fd, opened as file (which
 * messages and relative plugin paths use); fd stays the caller's. */
int app_read_fd(int fd, const char *file, struct app **out, char *err,
		size_t errlen);

/*
 * app_load() - open every plugin the app declares and find the
 * behaviour of every server. Returns 0, or a SMARM_E* status with err
 * set: the loader's (smarm_plugin_open_flags; SMARM_EPLUGINPERM is a
 * plugin the trust checks refused) at the plugin's line, or
 * smarm_plugin_behaviour's at the server's (no such behaviour);
 * SMARM_EINVAL for no app.
 */
int app_load(struct app *a, char *err, size_t errlen);

/*
 * app_build() - build the supervisor specs of the tree (after app_load)
 * and return the root's in *root (owned by the app). Nested supervisors
 * are children running smarm_sup_run on their own spec. Returns 0, or
 * -1 with err set.
 */
int app_build(struct app *a, const smarm_sup_spec_t **root, char *err,
	      size_t errlen);

/* app_count() - how many servers (*servers) and supervisors (*sups). */
void app_count(const struct app *a, size_t *servers, size_t *sups);

/* app_free() - free the app: its specs, its tree, and close its
 * plugins. NULL is a no-op. Not while a supervisor built from it runs. */
void app_free(struct app *a);

/* app_parse_duration() - "<digits><unit>" with unit ns, us, ms, s, m or
 * h into *ns. Returns 0, or -1 (no digits, no or unknown unit,
 * overflow). */
int app_parse_duration(const char *s, uint64_t *ns);

#endif /* SMARM_TOOLS_APP_H */

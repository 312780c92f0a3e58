/* SPDX-License-Identifier: MIT */
/*
 * app.c - smarm-run's application files (docs/smarm-run.md): the line
 * tokenizer and the parser and validator that builds the tree (struct
 * app), and freeing it. Pure: it calls nothing of the library, so the
 * fuzz harness and the parser's tests compile it alone; opening the
 * plugins and building specs is app_load.c's.
 *
 * Invariants:
 *   - every error is reported once, as "file:line[:col]: text", by err()
 *     and nothing after it runs: the parser returns -1 at the first one;
 *   - a parsed tree is valid as a whole: one root supervisor, child ids
 *     unique among siblings, names unique in the app, every server's
 *     plugin alias declared before it, depth at most APP_DEPTH_MAX;
 *   - parsing is linear in the lines: sibling ids and app-wide names
 *     are checked for uniqueness in hash sets (struct app_nset), never
 *     by scanning the siblings or the tree;
 *   - the app owns everything it points to (strings, nodes; specs and
 *     plugins through a_release, set by app_load.c): app_free releases
 *     all of it, from any partial state.
 */
#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ errors */

struct perr {
	const char *file;
	char *buf;
	size_t len;
};

int app_verrf(const char *file, char *buf, size_t len, int line, int col,
	      const char *fmt, va_list ap)
{
	int n;
	if (buf == NULL || len == 0)
		return -1;
	if (line <= 0)
		n = snprintf(buf, len, "%s: ", file);
	else if (col > 0)
		n = snprintf(buf, len, "%s:%d:%d: ", file, line, col);
	else
		n = snprintf(buf, len, "%s:%d: ", file, line);
	if (n < 0 || (size_t)n >= len)
		return -1;
	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	return -1;
}

int app_errf(const char *file, char *buf, size_t len, int line, int col,
	     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	app_verrf(file, buf, len, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

static int err_at(struct perr *e, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Write "file:line[:col]: text" into e's buffer; returns -1. */
static int err_at(struct perr *e, int line, int col, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	app_verrf(e->file, e->buf, e->len, line, col, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---------------------------------------------------------- tokens */

#define TOK_MAX 64 /* tokens of one line */

struct tok {
	char *text; /* unescaped, NUL-terminated (points into a line copy) */
	int col;    /* 1-based column of its first byte */
	int eq;	    /* offset of the '=' of key=value in text; -1 none */
};

struct line {
	int no;	    /* line number */
	int indent; /* leading spaces */
	int ntok;   /* tokens */
	struct tok tok[TOK_MAX];
	char buf[APP_LINE_MAX + 1]; /* tokens' storage */
};

/*
 * Split one line (len bytes, no newline) into tokens. A token is a run
 * of bytes other than space and tab; a double quote at its start, or
 * right after its first '=', opens a quoted part running to the next
 * unescaped double quote (escapes \" and \\), which must end the token.
 * '#' at the start of a token starts a comment.
 */
static int tokenize(struct perr *e, struct line *L, const char *s, size_t len)
{
	size_t i = 0;
	size_t o = 0; /* write offset in L->buf */
	L->ntok = 0;
	L->indent = 0;
	while (i < len && s[i] == ' ')
		i++;
	L->indent = (int)i;
	if (i < len && s[i] == '\t')
		return err_at(e, L->no, (int)i + 1,
			      "tab in indentation (indent with spaces)");
	for (;;) {
		struct tok *t;
		bool eq_seen = false;
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i >= len || s[i] == '#')
			return 0;
		if (L->ntok == TOK_MAX)
			return err_at(e, L->no, (int)i + 1,
				      "more than %d words on one line",
				      TOK_MAX);
		t = &L->tok[L->ntok++];
		t->text = L->buf + o;
		t->col = (int)i + 1;
		t->eq = -1;
		while (i < len && s[i] != ' ' && s[i] != '\t') {
			char c = s[i];
			if (c == '"') {
				size_t open = i;
				bool at_start = t->text == L->buf + o;
				bool after_eq =
					eq_seen && t->eq >= 0 &&
					L->buf + o == t->text + t->eq + 1;
				if (!at_start && !after_eq)
					return err_at(e, L->no, (int)i + 1,
						      "stray '\"'");
				i++;
				for (;;) {
					if (i >= len)
						return err_at(
							e, L->no, (int)open + 1,
							"unterminated string");
					if (s[i] == '"')
						break;
					if (s[i] == '\\') {
						if (i + 1 >= len ||
						    (s[i + 1] != '"' &&
						     s[i + 1] != '\\'))
							return err_at(
								e, L->no,
								(int)i + 1,
								"bad escape in "
								"string (only "
								"\\\" and "
								"\\\\)");
						i++;
					}
					L->buf[o++] = s[i++];
				}
				i++; /* the closing quote */
				if (i < len && s[i] != ' ' && s[i] != '\t')
					return err_at(e, L->no, (int)i + 1,
						      "text after a closing "
						      "'\"'");
				break;
			}
			if (c == '=' && !eq_seen) {
				eq_seen = true;
				t->eq = (int)(L->buf + o - t->text);
			}
			L->buf[o++] = c;
			i++;
		}
		L->buf[o++] = '\0';
	}
}

/* -------------------------------------------------------- values */

int app_parse_duration(const char *s, uint64_t *ns)
{
	uint64_t v = 0;
	uint64_t mul;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
		p++;
	}
	if (strcmp(p, "ns") == 0)
		mul = 1;
	else if (strcmp(p, "us") == 0)
		mul = 1000;
	else if (strcmp(p, "ms") == 0)
		mul = 1000000;
	else if (strcmp(p, "s") == 0)
		mul = 1000000000ull;
	else if (strcmp(p, "m") == 0)
		mul = 60 * 1000000000ull;
	else if (strcmp(p, "h") == 0)
		mul = 3600 * 1000000000ull;
	else
		return -1;
	if (v > (UINT64_MAX - 1) / mul)
		return -1; /* UINT64_MAX itself means "no timeout" */
	*ns = v * mul;
	return 0;
}

static bool is_ident(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
	      *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* A name or id: 1..max bytes, printable, no space (checked by the
 * tokenizer for bare words; quoted ones are checked here). */
static int check_name(struct perr *e, const struct line *L, const struct tok *t,
		      const char *what, const char *v, size_t max)
{
	size_t n = strlen(v);
	if (n == 0)
		return err_at(e, L->no, t->col, "empty %s", what);
	if (n > max)
		return err_at(e, L->no, t->col,
			      "%s longer than %zu bytes: '%.*s...'", what, max,
			      20, v);
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return err_at(e, L->no, t->col,
				      "%s holds a space or control byte", what);
	return 0;
}

static int parse_restart(const char *v, int *out)
{
	if (strcmp(v, "permanent") == 0)
		*out = SMARM_SUP_PERMANENT;
	else if (strcmp(v, "transient") == 0)
		*out = SMARM_SUP_TRANSIENT;
	else if (strcmp(v, "temporary") == 0)
		*out = SMARM_SUP_TEMPORARY;
	else
		return -1;
	return 0;
}

static int parse_strategy(const char *v, int *out)
{
	if (strcmp(v, "one_for_one") == 0)
		*out = SMARM_SUP_ONE_FOR_ONE;
	else if (strcmp(v, "one_for_all") == 0)
		*out = SMARM_SUP_ONE_FOR_ALL;
	else if (strcmp(v, "rest_for_one") == 0)
		*out = SMARM_SUP_REST_FOR_ONE;
	else
		return -1;
	return 0;
}

/* "N/DURATION": at most 65536 restarts in a window above 0. */
/* The first len bytes of v (len 0: all of it) as a decimal number in
 * [lo, hi]: digits only. */
static int parse_u32(const char *v, size_t len, uint32_t lo, uint32_t hi,
		     uint32_t *out)
{
	uint64_t n = 0;
	if (len == 0)
		len = strlen(v);
	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9' || n > hi)
			return -1;
		n = n * 10 + (uint64_t)(v[i] - '0');
	}
	if (n < lo || n > hi)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

static int parse_intensity(const char *v, uint32_t *max, uint64_t *period)
{
	const char *slash = strchr(v, '/');
	if (slash == NULL || slash == v ||
	    parse_u32(v, (size_t)(slash - v), 0, 65536, max) != 0)
		return -1;
	if (app_parse_duration(slash + 1, period) != 0 || *period == 0)
		return -1;
	return 0;
}

/* ------------------------------------------------------- node sets */

static const char *nset_key(const struct app_node *n, bool by_name)
{
	return by_name ? n->an_name : n->an_id;
}

static size_t nset_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

/* The node of key in set, or NULL. */
static struct app_node *nset_find(const struct app_nset *set, const char *key,
				  bool by_name)
{
	if (set->s_cap == 0)
		return NULL;
	for (size_t i = nset_hash(key) & (set->s_cap - 1);;
	     i = (i + 1) & (set->s_cap - 1)) {
		struct app_node *n = set->s_slot[i];
		if (n == NULL)
			return NULL;
		if (strcmp(nset_key(n, by_name), key) == 0)
			return n;
	}
}

/* Add n (its key not in set yet). Returns 0, or -1 out of memory. */
static int nset_add(struct app_nset *set, struct app_node *n, bool by_name)
{
	if (2 * (set->s_n + 1) > set->s_cap) {
		struct app_nset big = { NULL, set->s_cap ? 2 * set->s_cap : 16,
					0 };
		big.s_slot = calloc(big.s_cap, sizeof *big.s_slot);
		if (big.s_slot == NULL)
			return -1;
		for (size_t i = 0; i < set->s_cap; i++)
			if (set->s_slot[i] != NULL)
				(void)nset_add(&big, set->s_slot[i], by_name);
		free(set->s_slot);
		*set = big;
	}
	for (size_t i = nset_hash(nset_key(n, by_name)) & (set->s_cap - 1);;
	     i = (i + 1) & (set->s_cap - 1))
		if (set->s_slot[i] == NULL) {
			set->s_slot[i] = n;
			set->s_n++;
			return 0;
		}
}

/* ------------------------------------------------------------ tree */

static void node_free(struct app_node *n)
{
	if (n == NULL)
		return;
	for (size_t i = 0; i < n->an_nkids; i++)
		node_free(n->an_kids[i]);
	free(n->an_ids.s_slot);
	free(n->an_kids);
	free(n->an_args);
	free(n);
}

void app_free(struct app *a)
{
	if (a == NULL)
		return;
	if (a->a_release != NULL)
		a->a_release(a); /* app_load.c's: specs, plugins */
	node_free(a->a_root);
	for (size_t i = 0; i < a->a_nplugins; i++) {
		free(a->a_plugins[i].ap_path);
		free(a->a_plugins[i].ap_resolved);
	}
	free(a->a_plugins);
	free(a->a_file);
	free(a->a_dir);
	free(a);
}

static struct app_node *node_new(int kind, const struct line *L)
{
	struct app_node *n = calloc(1, sizeof *n);
	if (n == NULL)
		return NULL;
	n->an_kind = kind;
	n->an_line = L->no;
	n->an_col = L->indent + 1;
	n->an_kid_indent = -1;
	return n;
}

/* Append kid to sup's children (and its id to sup's set). */
static int kid_add(struct app_node *sup, struct app_node *kid)
{
	if (nset_add(&sup->an_ids, kid, false) != 0)
		return -1;
	if (sup->an_nkids == sup->an_capkids) {
		size_t cap = sup->an_capkids ? sup->an_capkids * 2 : 4;
		struct app_node **k =
			realloc(sup->an_kids, cap * sizeof *sup->an_kids);
		if (k == NULL)
			return -1;
		sup->an_kids = k;
		sup->an_capkids = cap;
	}
	sup->an_kids[sup->an_nkids++] = kid;
	kid->an_parent = sup;
	return 0;
}

static int node_depth(const struct app_node *n)
{
	int d = 0;
	for (; n != NULL; n = n->an_parent)
		d++;
	return d;
}

/* ---------------------------------------------------------- parser */

struct parser {
	struct perr e;
	struct app *a;
	bool seen_app, seen_run, seen_workers;
	/* the open supervisors, outermost first; the root is [0] */
	struct app_node *open[APP_DEPTH_MAX];
	int nopen;
	struct app_nset names; /* the servers by registered name */
};

static int oom(struct parser *p)
{
	return err_at(&p->e, 0, 0, "out of memory");
}

/* Expect exactly n tokens (the keyword counted). */
static int want_args(struct parser *p, const struct line *L, int min, int max,
		     const char *usage)
{
	if (L->ntok < min)
		return err_at(&p->e, L->no, 0, "missing field: %s", usage);
	if (L->ntok > max)
		return err_at(&p->e, L->no, L->tok[max].col,
			      "unexpected '%s' (%s)", L->tok[max].text, usage);
	return 0;
}

static int do_app(struct parser *p, const struct line *L)
{
	const struct tok *t;
	if (want_args(p, L, 2, 2, "app NAME") != 0)
		return -1;
	if (p->seen_app)
		return err_at(&p->e, L->no, L->tok[0].col,
			      "a second 'app' line");
	t = &L->tok[1];
	if (check_name(&p->e, L, t, "app name", t->text, APP_ALIAS_MAX) != 0)
		return -1;
	if (!is_ident(t->text))
		return err_at(&p->e, L->no, t->col,
			      "app name '%s' is not an identifier", t->text);
	strcpy(p->a->a_name, t->text);
	p->seen_app = true;
	return 0;
}

static int do_run(struct parser *p, const struct line *L)
{
	if (want_args(p, L, 2, 2, "run DURATION") != 0)
		return -1;
	if (p->seen_run)
		return err_at(&p->e, L->no, L->tok[0].col,
			      "a second 'run' line");
	if (app_parse_duration(L->tok[1].text, &p->a->a_run_ns) != 0 ||
	    p->a->a_run_ns == 0)
		return err_at(&p->e, L->no, L->tok[1].col,
			      "bad duration '%s' (a number above 0 and a "
			      "unit: ns, us, ms, s, m, h)",
			      L->tok[1].text);
	p->seen_run = true;
	return 0;
}

static int do_workers(struct parser *p, const struct line *L)
{
	uint32_t n;
	if (want_args(p, L, 2, 2, "workers N") != 0)
		return -1;
	if (p->seen_workers)
		return err_at(&p->e, L->no, L->tok[0].col,
			      "a second 'workers' line");
	if (parse_u32(L->tok[1].text, 0, 1, 64, &n) != 0)
		return err_at(&p->e, L->no, L->tok[1].col,
			      "bad worker count '%s' (1 to 64)",
			      L->tok[1].text);
	p->a->a_workers = (int)n;
	p->seen_workers = true;
	return 0;
}

/*
 * A plugin path resolved against the file's directory, without the
 * "./" steps that add nothing ("./x.so" in "t" is "t/x.so", in "." is
 * "./x.so", never "././x.so"). The result always holds a '/', so the
 * loader never takes it for a bare name.
 */
static char *join_dir(const char *dir, const char *path)
{
	size_t a, b;
	char *s;
	if (path[0] == '/')
		return strdup(path);
	while (path[0] == '.' && path[1] == '/') {
		path += 2;
		while (path[0] == '/')
			path++;
	}
	if (path[0] == '\0')
		path = ".";
	a = strlen(dir);
	b = strlen(path);
	s = malloc(a + b + 2);
	if (s == NULL)
		return NULL;
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, path, b + 1);
	return s;
}

static int do_plugin(struct parser *p, const struct line *L)
{
	struct app *a = p->a;
	const struct tok *t;
	struct app_plugin *pl;
	if (want_args(p, L, 3, 3, "plugin ALIAS PATH") != 0)
		return -1;
	t = &L->tok[1];
	if (check_name(&p->e, L, t, "plugin alias", t->text, APP_ALIAS_MAX) !=
	    0)
		return -1;
	if (!is_ident(t->text))
		return err_at(&p->e, L->no, t->col,
			      "plugin alias '%s' is not an identifier",
			      t->text);
	for (size_t i = 0; i < a->a_nplugins; i++)
		if (strcmp(a->a_plugins[i].ap_alias, t->text) == 0)
			return err_at(&p->e, L->no, t->col,
				      "duplicate plugin alias '%s' (first "
				      "at line %d)",
				      t->text, a->a_plugins[i].ap_line);
	if (L->tok[2].text[0] == '\0')
		return err_at(&p->e, L->no, L->tok[2].col, "empty plugin path");
	if (a->a_nplugins == a->a_capplugins) {
		size_t cap = a->a_capplugins ? a->a_capplugins * 2 : 4;
		struct app_plugin *v =
			realloc(a->a_plugins, cap * sizeof *a->a_plugins);
		if (v == NULL)
			return oom(p);
		a->a_plugins = v;
		a->a_capplugins = cap;
	}
	pl = &a->a_plugins[a->a_nplugins];
	memset(pl, 0, sizeof *pl);
	strcpy(pl->ap_alias, t->text);
	pl->ap_line = L->no;
	pl->ap_path = strdup(L->tok[2].text);
	pl->ap_resolved = pl->ap_path ? join_dir(a->a_dir, pl->ap_path) : NULL;
	a->a_nplugins++; /* owned from here, freed by app_free */
	if (pl->ap_path == NULL || pl->ap_resolved == NULL)
		return oom(p);
	return 0;
}

/* The parent supervisor of an indented line (see "Nesting"). */
static struct app_node *nest(struct parser *p, const struct line *L)
{
	struct app_node *par;
	while (p->nopen > 0 && p->open[p->nopen - 1]->an_col - 1 >= L->indent)
		p->nopen--;
	if (p->nopen == 0) {
		err_at(&p->e, L->no, L->indent + 1,
		       "bad nesting: an indented line outside a supervisor");
		return NULL;
	}
	par = p->open[p->nopen - 1];
	if (par->an_kid_indent < 0)
		par->an_kid_indent = L->indent;
	if (L->indent > par->an_kid_indent) {
		err_at(&p->e, L->no, L->indent + 1,
		       "bad nesting: indented under a server (only a "
		       "supervisor holds children)");
		return NULL;
	}
	if (L->indent != par->an_kid_indent) {
		err_at(&p->e, L->no, L->indent + 1,
		       "bad nesting: indentation %d does not match the "
		       "siblings' (%d)",
		       L->indent, par->an_kid_indent);
		return NULL;
	}
	return par;
}

/* Child id unique among the siblings. */
static int check_sibling(struct parser *p, const struct line *L,
			 const struct tok *t, struct app_node *par,
			 const char *id)
{
	const struct app_node *o = nset_find(&par->an_ids, id, false);
	if (o != NULL)
		return err_at(&p->e, L->no, t->col,
			      "duplicate child id '%s' in supervisor '%s' "
			      "(first at line %d)",
			      id, par->an_id, o->an_line);
	if (par->an_nkids >= SMARM_SUP_CHILDREN_MAX)
		return err_at(&p->e, L->no, 0,
			      "supervisor '%s' has more than %d children",
			      par->an_id, SMARM_SUP_CHILDREN_MAX);
	return 0;
}

static int do_supervisor(struct parser *p, const struct line *L)
{
	struct app_node *par = NULL;
	struct app_node *n;
	const struct tok *t;
	static const char usage[] =
		"supervisor ID STRATEGY [intensity N/DURATION] "
		"[fault_weight W]";
	if (L->indent == 0) {
		if (p->a->a_root != NULL)
			return err_at(&p->e, L->no, 1,
				      "a second root supervisor (first at "
				      "line %d); indent it to nest it",
				      p->a->a_root->an_line);
		p->nopen = 0;
	} else if ((par = nest(p, L)) == NULL) {
		return -1;
	}
	if (want_args(p, L, 3, 7, usage) != 0)
		return -1;
	if (L->ntok % 2 == 0)
		return err_at(&p->e, L->no, L->tok[L->ntok - 1].col,
			      "missing field: %s", usage);
	t = &L->tok[1];
	if (check_name(&p->e, L, t, "supervisor id", t->text, SMARM_NAME_MAX) !=
	    0)
		return -1;
	if (par != NULL && check_sibling(p, L, t, par, t->text) != 0)
		return -1;
	if (node_depth(par) + 1 > APP_DEPTH_MAX || p->nopen >= APP_DEPTH_MAX)
		return err_at(&p->e, L->no, L->indent + 1,
			      "bad nesting: supervisors nested deeper than %d",
			      APP_DEPTH_MAX);
	n = node_new(APP_SUP, L);
	if (n == NULL)
		return oom(p);
	strcpy(n->an_id, t->text);
	n->an_max_restarts = 3;
	n->an_period_ns = 5000000000ull;
	n->an_fault_weight = 1;
	if (par == NULL)
		p->a->a_root = n;
	else if (kid_add(par, n) != 0) {
		free(n);
		return oom(p);
	}
	if (parse_strategy(L->tok[2].text, &n->an_strategy) != 0)
		return err_at(&p->e, L->no, L->tok[2].col,
			      "bad strategy '%s' (one_for_one, one_for_all "
			      "or rest_for_one)",
			      L->tok[2].text);
	for (int k = 3; k + 1 < L->ntok; k += 2) {
		const struct tok *v = &L->tok[k + 1];
		if (strcmp(L->tok[k].text, "intensity") == 0) {
			if (parse_intensity(v->text, &n->an_max_restarts,
					    &n->an_period_ns) != 0)
				return err_at(&p->e, L->no, v->col,
					      "bad intensity '%s' (N/DURATION: "
					      "N from 0 to 65536 restarts in a "
					      "window above 0, such as 3/5s)",
					      v->text);
		} else if (strcmp(L->tok[k].text, "fault_weight") == 0) {
			if (parse_u32(v->text, 0, 1, 65536,
				      &n->an_fault_weight) != 0)
				return err_at(&p->e, L->no, v->col,
					      "bad fault_weight '%s' (the "
					      "restarts one contained fault "
					      "counts: 1 to 65536)",
					      v->text);
		} else {
			return err_at(&p->e, L->no, L->tok[k].col,
				      "unknown keyword '%s' (%s)",
				      L->tok[k].text, usage);
		}
	}
	p->open[p->nopen++] = n;
	return 0;
}

/*
 * The args value with each ${ALIAS} replaced by the resolved path of
 * that plugin (declared above), so a plugin can open another one to be
 * a client of its servers. A '$' not followed by '{' is itself.
 */
static int expand_args(struct parser *p, const struct line *L,
		       const struct tok *t, const char *v, char **out)
{
	size_t cap = strlen(v) + 1;
	size_t o = 0;
	char *s;
	for (const char *c = v; (c = strstr(c, "${")) != NULL; c += 2)
		for (size_t i = 0; i < p->a->a_nplugins; i++)
			cap += strlen(p->a->a_plugins[i].ap_resolved);
	s = malloc(cap);
	if (s == NULL)
		return oom(p);
	for (const char *c = v; *c;) {
		const char *end;
		bool found = false;
		if (c[0] != '$' || c[1] != '{') {
			s[o++] = *c++;
			continue;
		}
		end = strchr(c + 2, '}');
		if (end == NULL) {
			free(s);
			return err_at(&p->e, L->no, t->col,
				      "unterminated '${' in args");
		}
		for (size_t i = 0; i < p->a->a_nplugins && !found; i++) {
			const struct app_plugin *pl = &p->a->a_plugins[i];
			size_t n = strlen(pl->ap_alias);
			if (n == (size_t)(end - c - 2) &&
			    memcmp(pl->ap_alias, c + 2, n) == 0) {
				n = strlen(pl->ap_resolved);
				memcpy(s + o, pl->ap_resolved, n);
				o += n;
				found = true;
			}
		}
		if (!found) {
			int len = (int)(end - c - 2);
			free(s);
			return err_at(&p->e, L->no, t->col,
				      "unknown plugin alias '%.*s' in args",
				      len > 64 ? 64 : len, c + 2);
		}
		c = end + 1;
	}
	s[o] = '\0';
	*out = s;
	return 0;
}

/* The key=value fields of a server line (docs/smarm-run.md). */
static int server_field(struct parser *p, const struct line *L,
			const struct tok *t, struct app_node *n, int k)
{
	const char *v = t->text + t->eq + 1;
	switch (k) {
	case 0: /* id */
		if (check_name(&p->e, L, t, "id", v, SMARM_NAME_MAX) != 0)
			return -1;
		strcpy(n->an_id, v);
		return 0;
	case 1: /* name */
		if (check_name(&p->e, L, t, "name", v, SMARM_NAME_MAX) != 0)
			return -1;
		strcpy(n->an_name, v);
		return 0;
	case 2:
		if (parse_restart(v, &n->an_restart) != 0)
			return err_at(&p->e, L->no, t->col,
				      "invalid restart '%s' (permanent, "
				      "transient or temporary)",
				      v);
		return 0;
	case 3:
		if (strcmp(v, "brutal") == 0)
			n->an_shutdown_ns = SMARM_SUP_BRUTAL_KILL;
		else if (strcmp(v, "infinity") == 0)
			n->an_shutdown_ns = SMARM_SUP_INFINITY;
		else if (app_parse_duration(v, &n->an_shutdown_ns) != 0 ||
			 n->an_shutdown_ns == 0)
			return err_at(&p->e, L->no, t->col,
				      "invalid shutdown '%s' (brutal, "
				      "infinity or a duration above 0)",
				      v);
		return 0;
	case 4:
		if (strcmp(v, "infinity") == 0)
			n->an_ready_ns = SMARM_NO_TIMEOUT;
		else if (app_parse_duration(v, &n->an_ready_ns) != 0)
			return err_at(&p->e, L->no, t->col,
				      "bad duration '%s' (infinity, or a "
				      "number and a unit: ns, us, ms, s, m, "
				      "h)",
				      v);
		return 0;
	default: /* args */
		return expand_args(p, L, t, v, &n->an_args);
	}
}

/* PLUGIN.BEHAVIOUR: a declared alias and a behaviour name. */
static int server_target(struct parser *p, const struct line *L,
			 const struct tok *t, struct app_node *n)
{
	const struct app *a = p->a;
	const char *dot = strchr(t->text, '.');
	size_t alen;
	if (t->eq >= 0 || dot == NULL)
		return err_at(&p->e, L->no, t->col,
			      "missing field: PLUGIN.BEHAVIOUR, not '%.*s'", 64,
			      t->text);
	alen = (size_t)(dot - t->text);
	for (size_t i = 0; i < a->a_nplugins; i++)
		if (strlen(a->a_plugins[i].ap_alias) == alen &&
		    memcmp(a->a_plugins[i].ap_alias, t->text, alen) == 0) {
			n->an_plugin = i;
			if (strlen(dot + 1) > SMARM_OP_NAME_MAX ||
			    !is_ident(dot + 1))
				return err_at(&p->e, L->no,
					      t->col + (int)alen + 1,
					      "bad behaviour name '%.*s' (an "
					      "identifier of at most %d bytes)",
					      64, dot + 1, SMARM_OP_NAME_MAX);
			strcpy(n->an_bhv, dot + 1);
			return 0;
		}
	return err_at(&p->e, L->no, t->col,
		      "unknown plugin alias '%.*s' (declare it with a plugin "
		      "line first)",
		      (int)(alen > 64 ? 64 : alen), t->text);
}

static int do_server(struct parser *p, const struct line *L)
{
	static const char *const keys[] = { "id",	"name",	 "restart",
					    "shutdown", "ready", "args" };
	struct app_node *par;
	struct app_node *n;
	const struct tok *id_tok = &L->tok[1];
	const struct tok *name_tok = NULL;
	const struct app_node *o;
	bool seen[6] = { false };
	if (L->indent == 0)
		return err_at(&p->e, L->no, 1,
			      "bad nesting: a server must be indented under "
			      "a supervisor");
	if ((par = nest(p, L)) == NULL)
		return -1;
	if (want_args(p, L, 2, 8, "server PLUGIN.BEHAVIOUR [key=value...]") !=
	    0)
		return -1;
	n = node_new(APP_SERVER, L);
	if (n == NULL)
		return oom(p);
	n->an_restart = SMARM_SUP_PERMANENT;
	n->an_shutdown_ns = SMARM_SUP_SHUTDOWN_DEFAULT;
	n->an_ready_ns = 5000000000ull;
	if (server_target(p, L, &L->tok[1], n) != 0)
		goto fail;
	for (int i = 2; i < L->ntok; i++) {
		const struct tok *t = &L->tok[i];
		int k;
		if (t->eq < 0) {
			err_at(&p->e, L->no, t->col,
			       "expected key=value, not '%.*s'", 64, t->text);
			goto fail;
		}
		for (k = 0; k < 6; k++)
			if ((size_t)t->eq == strlen(keys[k]) &&
			    memcmp(t->text, keys[k], (size_t)t->eq) == 0)
				break;
		if (k == 6) {
			err_at(&p->e, L->no, t->col,
			       "unknown keyword '%.*s' (id, name, restart, "
			       "shutdown, ready or args)",
			       t->eq > 32 ? 32 : t->eq, t->text);
			goto fail;
		}
		if (seen[k]) {
			err_at(&p->e, L->no, t->col, "'%s' given twice",
			       keys[k]);
			goto fail;
		}
		seen[k] = true;
		if (k == 0)
			id_tok = t;
		if (k == 1)
			name_tok = t;
		if (server_field(p, L, t, n, k) != 0)
			goto fail;
	}
	if (n->an_id[0] == '\0')
		strcpy(n->an_id, n->an_name[0] ? n->an_name : n->an_bhv);
	if (check_sibling(p, L, id_tok, par, n->an_id) != 0)
		goto fail;
	if (n->an_name[0] != '\0' &&
	    (o = nset_find(&p->names, n->an_name, true)) != NULL) {
		err_at(&p->e, L->no, name_tok->col,
		       "duplicate name '%s' (first at line %d)", n->an_name,
		       o->an_line);
		goto fail;
	}
	if (n->an_name[0] != '\0' && nset_add(&p->names, n, true) != 0) {
		oom(p);
		goto fail;
	}
	if (kid_add(par, n) != 0) {
		oom(p);
		goto fail; /* the name stays in the set: parsing ends here */
	}
	return 0;
fail:
	node_free(n);
	return -1;
}

static int parse_line(struct parser *p, struct line *L)
{
	const char *kw;
	if (L->ntok == 0)
		return 0;
	kw = L->tok[0].text;
	if (strcmp(kw, "supervisor") == 0)
		return do_supervisor(p, L);
	if (strcmp(kw, "server") == 0)
		return do_server(p, L);
	if (strcmp(kw, "app") == 0 || strcmp(kw, "run") == 0 ||
	    strcmp(kw, "plugin") == 0 || strcmp(kw, "workers") == 0) {
		if (L->indent != 0)
			return err_at(&p->e, L->no, L->indent + 1,
				      "bad nesting: '%s' belongs at the start "
				      "of a line",
				      kw);
		p->nopen = 0; /* closes the tree's open supervisors */
		if (kw[0] == 'a')
			return do_app(p, L);
		if (kw[0] == 'r')
			return do_run(p, L);
		if (kw[0] == 'w')
			return do_workers(p, L);
		return do_plugin(p, L);
	}
	return err_at(&p->e, L->no, L->tok[0].col,
		      "unknown keyword '%.*s' (app, run, workers, plugin, "
		      "supervisor or server)",
		      32, kw);
}

static char *dir_of(const char *file)
{
	const char *slash = strrchr(file, '/');
	char *d;
	if (slash == NULL)
		return strdup(".");
	if (slash == file)
		return strdup("/");
	d = malloc((size_t)(slash - file) + 1);
	if (d == NULL)
		return NULL;
	memcpy(d, file, (size_t)(slash - file));
	d[slash - file] = '\0';
	return d;
}

int app_parse(const char *file, const char *text, size_t len, struct app **out,
	      char *err, size_t errlen)
{
	struct parser p;
	struct line *L = NULL;
	size_t pos = 0;
	int no = 0;
	int rc = -1;
	memset(&p, 0, sizeof p);
	p.e.file = file ? file : "(app)";
	p.e.buf = err;
	p.e.len = errlen;
	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (out == NULL || (text == NULL && len > 0))
		return err_at(&p.e, 0, 0, "no text to parse");
	*out = NULL;
	if (len > APP_FILE_MAX)
		return err_at(&p.e, 0, 0, "file longer than %d bytes",
			      APP_FILE_MAX);
	p.a = calloc(1, sizeof *p.a);
	L = malloc(sizeof *L);
	if (p.a == NULL || L == NULL)
		goto nomem;
	p.a->a_file = strdup(p.e.file);
	p.a->a_dir = dir_of(p.e.file);
	if (p.a->a_file == NULL || p.a->a_dir == NULL)
		goto nomem;
	while (pos < len) {
		const char *s = text + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		pos += n + (nl ? 1 : 0);
		no++;
		if (n > 0 && s[n - 1] == '\r')
			n--;
		if (memchr(s, '\0', n) != NULL) {
			err_at(&p.e, no,
			       (int)((const char *)memchr(s, '\0', n) - s) + 1,
			       "NUL byte in the file");
			goto fail;
		}
		if (n > APP_LINE_MAX) {
			err_at(&p.e, no, 0, "line longer than %d bytes",
			       APP_LINE_MAX);
			goto fail;
		}
		L->no = no;
		if (tokenize(&p.e, L, s, n) != 0 || parse_line(&p, L) != 0)
			goto fail;
	}
	if (!p.seen_app) {
		err_at(&p.e, no > 0 ? no : 1, 0,
		       "missing field: no 'app NAME' line");
		goto fail;
	}
	if (p.a->a_root == NULL) {
		err_at(&p.e, no, 0, "missing field: no root supervisor");
		goto fail;
	}
	*out = p.a;
	p.a = NULL;
	rc = 0;
	goto fail;
nomem:
	oom(&p);
fail:
	free(L);
	free(p.names.s_slot);
	app_free(p.a);
	return rc;
}

int app_read_fd(int fd, const char *file, struct app **out, char *err,
		size_t errlen)
{
	struct perr e = { file ? file : "(null)", err, errlen };
	char *buf;
	size_t n = 0;
	int rc;
	if (out == NULL || file == NULL || fd < 0)
		return err_at(&e, 0, 0, "no file given");
	buf = malloc(APP_FILE_MAX + 1);
	if (buf == NULL)
		return err_at(&e, 0, 0, "out of memory");
	while (n < APP_FILE_MAX + 1) {
		ssize_t r = read(fd, buf + n, APP_FILE_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = err_at(&e, 0, 0, "cannot read: %s",
				    strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	rc = app_parse(file, buf, n, out, err, errlen);
out:
	free(buf);
	return rc;
}

int app_read(const char *file, struct app **out, char *err, size_t errlen)
{
	struct perr e = { file ? file : "(null)", err, errlen };
	int fd, rc;
	if (out == NULL || file == NULL)
		return err_at(&e, 0, 0, "no file given");
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_at(&e, 0, 0, "cannot open: %s", strerror(errno));
	rc = app_read_fd(fd, file, out, err, errlen);
	close(fd);
	return rc;
}

static void count_node(const struct app_node *n, size_t *servers, size_t *sups)
{
	if (n->an_kind == APP_SERVER) {
		(*servers)++;
		return;
	}
	(*sups)++;
	for (size_t i = 0; i < n->an_nkids; i++)
		count_node(n->an_kids[i], servers, sups);
}

void app_count(const struct app *a, size_t *servers, size_t *sups)
{
	size_t sv = 0, su = 0;
	if (a != NULL && a->a_root != NULL)
		count_node(a->a_root, &sv, &su);
	if (servers)
		*servers = sv;
	if (sups)
		*sups = su;
}

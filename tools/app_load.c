/* SPDX-License-Identifier: MIT */
/*
 * app_load.c - the library half of smarm-run's application files
 * (app.h): open the plugins an app declares and resolve its servers'
 * behaviours (app_load), turn its tree into supervisor specs
 * (app_build), and release both (app_release, which app_free calls
 * through struct app's a_release).
 *
 * Invariants: a plugin is open (ap_pl set) from its successful
 * smarm_plugin_open until app_release; a node's spec (an_spec) lives
 * from app_build until app_release, and a nested supervisor's child
 * entry points at its node, so no spec is freed while the tree that
 * was started from it runs (app_free's contract). Public API only.
 */
#include "app.h"

struct perr {
	const char *file;
	char *buf;
	size_t len;
};

#define err_at(e, line, col, ...)                                              \
	app_errf((e)->file, (e)->buf, (e)->len, line, col, __VA_ARGS__)

/* ---------------------------------------------------------- loading */

static void release_node(struct app_node *n)
{
	for (size_t i = 0; i < n->an_nkids; i++)
		release_node(n->an_kids[i]);
	smarm_sup_spec_free(n->an_spec);
	n->an_spec = NULL;
}

/* struct app's a_release: the specs, then the plugins. */
static void app_release(struct app *a)
{
	if (a->a_root != NULL)
		release_node(a->a_root);
	for (size_t i = 0; i < a->a_nplugins; i++)
		if (a->a_plugins[i].ap_pl != NULL) {
			smarm_plugin_close(a->a_plugins[i].ap_pl);
			a->a_plugins[i].ap_pl = NULL;
		}
	a->a_release = NULL;
}

/* Find n's behaviours: 0, or smarm_plugin_behaviour's status. */
static int load_node(struct perr *e, struct app *a, struct app_node *n)
{
	if (n->an_kind == APP_SERVER) {
		struct app_plugin *pl = &a->a_plugins[n->an_plugin];
		int rc = smarm_plugin_behaviour(pl->ap_pl, n->an_bhv, &n->an_b);
		if (rc != 0)
			err_at(e, n->an_line, n->an_col,
			       "plugin '%s' (%s) has no behaviour '%s' (%s)",
			       pl->ap_alias, pl->ap_path, n->an_bhv,
			       smarm_err_name(rc));
		return rc;
	}
	for (size_t i = 0; i < n->an_nkids; i++) {
		int rc = load_node(e, a, n->an_kids[i]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

int app_load(struct app *a, char *err, size_t errlen)
{
	struct perr e = { a ? a->a_file : "(null)", err, errlen };
	if (a == NULL) {
		err_at(&e, 0, 0, "no app");
		return SMARM_EINVAL;
	}
	a->a_release = app_release;
	for (size_t i = 0; i < a->a_nplugins; i++) {
		struct app_plugin *pl = &a->a_plugins[i];
		char msg[APP_ERR_MAX / 2];
		int rc;
		if (pl->ap_pl != NULL)
			continue;
		msg[0] = '\0';
		rc = smarm_plugin_open_flags(pl->ap_resolved, a->a_open_flags,
					     &pl->ap_pl, msg, sizeof msg);
		if (rc != 0) {
			pl->ap_pl = NULL;
			err_at(&e, pl->ap_line, 0, "plugin '%s': %s (%s)",
			       pl->ap_alias, msg[0] ? msg : smarm_strerror(rc),
			       smarm_err_name(rc));
			return rc;
		}
	}
	return load_node(&e, a, a->a_root);
}

/* A nested supervisor's body: supervise its spec (see app_build). */
static void sub_body(void *arg)
{
	const struct app_node *n = arg;
	(void)smarm_sup_run(n->an_spec);
}

static int build_node(struct perr *e, struct app_node *n)
{
	int rc = smarm_sup_spec_alloc(&n->an_spec);
	if (rc == 0)
		rc = smarm_sup_spec_set_strategy(n->an_spec, n->an_strategy);
	if (rc == 0)
		rc = smarm_sup_spec_set_intensity(
			n->an_spec, n->an_max_restarts, n->an_period_ns);
	if (rc == 0)
		rc = smarm_sup_spec_set_fault_weight(n->an_spec,
						     n->an_fault_weight);
	if (rc != 0)
		return err_at(e, n->an_line, n->an_col, "supervisor '%s': %s",
			      n->an_id, smarm_strerror(rc));
	for (size_t i = 0; i < n->an_nkids; i++) {
		struct app_node *k = n->an_kids[i];
		if (k->an_kind == APP_SERVER) {
			rc = smarm_sup_spec_add_server(
				n->an_spec, k->an_id, k->an_b, k->an_args,
				k->an_name[0] ? k->an_name : NULL,
				k->an_restart, k->an_shutdown_ns,
				k->an_ready_ns);
		} else {
			if (build_node(e, k) != 0)
				return -1;
			rc = smarm_sup_spec_add_child(
				n->an_spec, k->an_id, sub_body, k,
				SMARM_SUP_PERMANENT, SMARM_SUP_INFINITY);
			if (rc == 0)
				rc = smarm_sup_spec_set_child_ready(
					n->an_spec, k->an_id, SMARM_NO_TIMEOUT);
		}
		if (rc != 0)
			return err_at(e, k->an_line, k->an_col,
				      "child '%s': %s (%s)", k->an_id,
				      smarm_strerror(rc), smarm_err_name(rc));
	}
	return 0;
}

int app_build(struct app *a, const smarm_sup_spec_t **root, char *err,
	      size_t errlen)
{
	struct perr e = { a ? a->a_file : "(null)", err, errlen };
	if (a == NULL || root == NULL || a->a_root == NULL)
		return err_at(&e, 0, 0, "no app");
	a->a_release = app_release;
	if (a->a_root->an_spec == NULL && build_node(&e, a->a_root) != 0)
		return -1;
	*root = a->a_root->an_spec;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * sup_api.c - the public calls of supervisors (abi/smarm/otp.h,
 * "Supervisors"): the spec object and its setters, readiness reports,
 * smarm_sup_run and smarm_sup_start, and the calls to a running
 * supervisor. Each checks its arguments and its context, then calls
 * sup.c, which checks nothing again.
 *
 * Ownership: a spec is the caller's, from smarm_sup_spec_alloc to
 * smarm_sup_spec_free; a supervisor runs on a copy of it. Locking: none
 * taken here. Invariants: INV-1 a call that returns an argument error
 * (SMARM_EINVAL, SMARM_ENOTACTOR) has changed nothing.
 * See: docs/architecture/supervisors.md, docs/embedding.md.
 */
#include "sup.h"

#include "reg.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- spec */

int smarm_sup_spec_alloc(smarm_sup_spec_t **out)
{
	struct smarm_sup_spec *sp;
	if (out == NULL)
		return SMARM_EINVAL;
	sp = calloc(1, sizeof *sp);
	if (sp == NULL)
		return SMARM_ENOMEM;
	sp->sp_strategy = SMARM_SUP_ONE_FOR_ONE;
	sp->sp_max = 3;
	sp->sp_period = 5000000000ull;
	sp->sp_fault_weight = 1;
	*out = sp;
	return 0;
}

/* Forget spec's index (a scan serves its searches). */
static void spec_unindex(smarm_sup_spec_t *spec)
{
	free(spec->sp_hn);
	free(spec->sp_byid.ht_b);
	spec->sp_hn = NULL;
	spec->sp_byid.ht_b = NULL;
}

void smarm__sup_spec_destroy(struct smarm_sup_spec *spec)
{
	spec_unindex(spec);
	free(spec->sp_kids);
	free(spec);
}

void smarm_sup_spec_free(smarm_sup_spec_t *spec)
{
	if (spec != NULL)
		smarm__sup_spec_destroy(spec);
}

/* A setter's failure on spec: remembered (sp_bad), then returned. */
static int spec_fail(smarm_sup_spec_t *spec, int rc)
{
	if (spec != NULL && spec->sp_bad == 0)
		spec->sp_bad = rc;
	return rc;
}

int smarm_sup_spec_set_strategy(smarm_sup_spec_t *spec, int strategy)
{
	if (spec == NULL || strategy < SMARM_SUP_ONE_FOR_ONE ||
	    strategy > SMARM_SUP_SIMPLE_ONE_FOR_ONE)
		return spec_fail(spec, SMARM_EINVAL);
	spec->sp_strategy = strategy;
	return 0;
}

int smarm_sup_spec_set_intensity(smarm_sup_spec_t *spec, uint32_t max_restarts,
				 uint64_t period_ns)
{
	if (spec == NULL || max_restarts > 65536 || period_ns == 0)
		return spec_fail(spec, SMARM_EINVAL);
	spec->sp_max = max_restarts;
	spec->sp_period = period_ns;
	return 0;
}

int smarm_sup_spec_set_fault_weight(smarm_sup_spec_t *spec, uint32_t weight)
{
	if (spec == NULL || weight == 0 || weight > 65536)
		return spec_fail(spec, SMARM_EINVAL);
	spec->sp_fault_weight = weight;
	return 0;
}

/* A child id follows the rule of names (reg.h). */
static bool id_ok(const char *id)
{
	size_t len;
	return smarm__name_check(id, &len) == 0;
}

/* A spec of at most this many children is searched by a scan. */
#define SPEC_SCAN_MAX 16

/* Enter child i in spec's index (sp_hn set). */
static void spec_index(smarm_sup_spec_t *spec, uint32_t i)
{
	const char *id = spec->sp_kids[i].cs_id;
	spec->sp_hn[i].hn_hash = smarm__name_hash(id, strlen(id));
	smarm__htab_insert(&spec->sp_byid, &spec->sp_hn[i]);
}

/*
 * (Re)build spec's index for sp_cap children: sp_kids moved, or a scan
 * became too long. False, and no index, if out of memory: a scan still
 * answers, only slower.
 */
static bool spec_reindex(smarm_sup_spec_t *spec)
{
	struct smarm__htab_node *hn;
	if (spec->sp_byid.ht_b == NULL && smarm__htab_init(&spec->sp_byid) != 0)
		return false;
	hn = realloc(spec->sp_hn, spec->sp_cap * sizeof *hn);
	if (hn == NULL) {
		spec_unindex(spec);
		return false;
	}
	spec->sp_hn = hn;
	smarm__htab_clear(&spec->sp_byid);
	for (uint32_t i = 0; i < spec->sp_n; i++)
		spec_index(spec, i);
	return true;
}

/* The child of that id, or NULL: O(1) past SPEC_SCAN_MAX children, so
 * that a spec of n children is built in O(n), not O(n^2). */
static struct smarm__sup_cspec *spec_find(smarm_sup_spec_t *spec,
					  const char *id)
{
	size_t len = strlen(id);
	uint64_t key;
	if (spec->sp_hn == NULL &&
	    (spec->sp_n <= SPEC_SCAN_MAX || !spec_reindex(spec))) {
		for (uint32_t i = 0; i < spec->sp_n; i++)
			if (strcmp(spec->sp_kids[i].cs_id, id) == 0)
				return &spec->sp_kids[i];
		return NULL;
	}
	key = smarm__name_hash(id, len);
	for (struct smarm__htab_node *e =
		     smarm__htab_first(&spec->sp_byid, key);
	     e != NULL; e = e->hn_next) {
		struct smarm__sup_cspec *c = &spec->sp_kids[e - spec->sp_hn];
		if (e->hn_hash == key && strcmp(c->cs_id, id) == 0)
			return c;
	}
	return NULL;
}

/* Append a child of body fn or tfn (one of them set). */
static int spec_add(smarm_sup_spec_t *spec, const char *id, smarm_actor_cb fn,
		    smarm_sup_template_cb tfn, void *arg, int restart,
		    uint64_t shutdown_ns)
{
	struct smarm__sup_cspec *c;
	if (spec == NULL || (fn == NULL && tfn == NULL) || !id_ok(id) ||
	    restart < SMARM_SUP_PERMANENT || restart > SMARM_SUP_TEMPORARY ||
	    spec->sp_n >= SMARM_SUP_CHILDREN_MAX)
		return spec_fail(spec, SMARM_EINVAL);
	if (spec_find(spec, id) != NULL)
		return spec_fail(spec, SMARM_EEXIST);
	if (spec->sp_n == spec->sp_cap) {
		uint32_t cap = spec->sp_cap ? spec->sp_cap * 2 : 8;
		void *p = realloc(spec->sp_kids, cap * sizeof *spec->sp_kids);
		if (p == NULL)
			return spec_fail(spec, SMARM_ENOMEM);
		spec->sp_kids = p;
		spec->sp_cap = cap;
		if (spec->sp_hn != NULL)
			(void)spec_reindex(spec); /* nodes for cap */
	}
	c = &spec->sp_kids[spec->sp_n++];
	memset(c, 0, sizeof *c);
	strcpy(c->cs_id, id);
	if (spec->sp_hn != NULL)
		spec_index(spec, spec->sp_n - 1);
	c->cs_fn = fn;
	c->cs_tfn = tfn;
	c->cs_arg = arg;
	c->cs_restart = restart;
	c->cs_shutdown = shutdown_ns;
	return 0;
}

int smarm_sup_spec_add_child(smarm_sup_spec_t *spec, const char *id,
			     smarm_actor_cb fn, void *arg, int restart,
			     uint64_t shutdown_ns)
{
	if (fn == NULL)
		return spec_fail(spec, SMARM_EINVAL);
	return spec_add(spec, id, fn, NULL, arg, restart, shutdown_ns);
}

int smarm_sup_spec_add_template(smarm_sup_spec_t *spec, const char *id,
				smarm_sup_template_cb fn, void *arg,
				int restart, uint64_t shutdown_ns)
{
	if (fn == NULL)
		return spec_fail(spec, SMARM_EINVAL);
	return spec_add(spec, id, NULL, fn, arg, restart, shutdown_ns);
}

/* The child id of spec, for a setter: 0 and *c, or the setter's
 * failure (SMARM_EINVAL spec or id bad, SMARM_ENOENT no such child). */
static int child_of(smarm_sup_spec_t *spec, const char *id,
		    struct smarm__sup_cspec **c)
{
	if (spec == NULL || !id_ok(id))
		return spec_fail(spec, SMARM_EINVAL);
	*c = spec_find(spec, id);
	return *c != NULL ? 0 : spec_fail(spec, SMARM_ENOENT);
}

int smarm_sup_spec_set_child_ready(smarm_sup_spec_t *spec, const char *id,
				   uint64_t timeout_ns)
{
	struct smarm__sup_cspec *c;
	int rc = child_of(spec, id, &c);
	if (rc != 0)
		return rc;
	c->cs_await = true;
	c->cs_ready_ns = timeout_ns;
	return 0;
}

int smarm_sup_spec_set_child_type(smarm_sup_spec_t *spec, const char *id,
				  int type)
{
	struct smarm__sup_cspec *c;
	int rc;
	if (type != SMARM_SUP_WORKER && type != SMARM_SUP_SUPERVISOR)
		return spec_fail(spec, SMARM_EINVAL);
	rc = child_of(spec, id, &c);
	if (rc != 0)
		return rc;
	c->cs_type = type;
	if (type == SMARM_SUP_SUPERVISOR && !c->cs_await) {
		c->cs_await = true; /* it is one once smarm_sup_run reports */
		c->cs_ready_ns = SMARM_NO_TIMEOUT;
	}
	return 0;
}

int smarm_sup_spec_set_auto_shutdown(smarm_sup_spec_t *spec, int mode)
{
	if (spec == NULL || mode < SMARM_SUP_AUTO_NEVER ||
	    mode > SMARM_SUP_AUTO_ALL_SIGNIFICANT)
		return spec_fail(spec, SMARM_EINVAL);
	spec->sp_auto = mode;
	return 0;
}

int smarm_sup_spec_set_child_significant(smarm_sup_spec_t *spec, const char *id,
					 bool significant)
{
	struct smarm__sup_cspec *c;
	int rc = child_of(spec, id, &c);
	if (rc != 0)
		return rc;
	if (significant && c->cs_restart == SMARM_SUP_PERMANENT)
		return spec_fail(spec, SMARM_EBADSPEC); /* bad_combination */
	c->cs_significant = significant;
	return 0;
}

/* A heap copy of spec, or NULL (out of memory). */
static struct smarm_sup_spec *spec_dup(const struct smarm_sup_spec *spec)
{
	struct smarm_sup_spec *d = malloc(sizeof *d);
	if (d == NULL)
		return NULL;
	*d = *spec;
	d->sp_cap = spec->sp_n;
	d->sp_kids = NULL;
	d->sp_hn = NULL; /* indexed again if searched */
	d->sp_byid.ht_b = NULL;
	if (spec->sp_n != 0) {
		d->sp_kids = malloc(spec->sp_n * sizeof *d->sp_kids);
		if (d->sp_kids == NULL) {
			free(d);
			return NULL;
		}
		memcpy(d->sp_kids, spec->sp_kids,
		       spec->sp_n * sizeof *d->sp_kids);
	}
	return d;
}

int smarm_sup_ready(void)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	return smarm__sup_report(0, 0);
}

int smarm_sup_ready_info(intptr_t info)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	return smarm__sup_report(0, info);
}

int smarm_sup_ignore(void)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (smarm__sup_report(SMARM__SUP_IGNORE, 0) != 0)
		return SMARM_ESTATE; /* no supervisor spawned the caller */
	smarm__self_exit(SMARM_EXIT_NORMAL, 0);
}

int smarm_sup_start_failed(int status)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (status >= 0)
		return SMARM_EINVAL;
	(void)smarm__sup_report(status, 0);
	smarm__self_exit(SMARM_EXIT_NORMAL, 0);
}

/* The checks of a start or run, then the copy of spec it runs from. */
static int spec_take(const smarm_sup_spec_t *spec, struct smarm_sup_spec **copy)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (spec == NULL)
		return SMARM_EINVAL;
	if (smarm__sup_spec_check(spec) != 0)
		return SMARM_EBADSPEC;
	*copy = spec_dup(spec);
	return *copy != NULL ? 0 : SMARM_ENOMEM;
}

int smarm_sup_run(const smarm_sup_spec_t *spec)
{
	struct smarm_sup_spec *copy;
	int rc = spec_take(spec, &copy);
	return rc != 0 ? rc : smarm__sup_run(copy, NULL, false);
}

int smarm_sup_start(const smarm_sup_spec_t *spec, smarm_pid_t *out)
{
	struct smarm_sup_spec *copy;
	int rc = spec_take(spec, &copy);
	return rc != 0 ? rc : smarm__sup_start(copy, out);
}

int smarm_sup_run_init(smarm_sup_init_cb init, void *arg)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (init == NULL)
		return SMARM_EINVAL;
	return smarm__sup_run_init(init, arg, false);
}

int smarm_sup_start_init(smarm_sup_init_cb init, void *arg, smarm_pid_t *out,
			 intptr_t *why)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (init == NULL)
		return SMARM_EINVAL;
	return smarm__sup_start_init(init, arg, out, why);
}

/* ------------------------------------------- calls to a running one */

/* A request to the supervisor sup, once its pid is checked. */
static int sup_call(smarm_pid_t sup, struct smarm__sup_ctl *q,
		    uint64_t timeout_ns, smarm_signal_t *r)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (sup.id == 0 || sup.id == smarm__self_pid())
		return SMARM_EINVAL;
	return smarm__sup_call(sup, q, timeout_ns, r);
}

/*
 * A start's status after which its pid out-parameter is written: 0 (the
 * child's pid), or SMARM_EEXIST with the actor in the way, OTP's
 * {already_started, Pid}: the running child of that id, or the holder
 * of a name the child found taken; SMARM_PID_NONE for a child of that
 * id that is not running (OTP's already_present) or a failure that
 * named nobody. r is read only once the call went through.
 */
static bool taken_or_ok(int rc)
{
	return rc == 0 || rc == SMARM_EEXIST;
}

static int id_req(struct smarm__sup_ctl *q, int op, const char *id)
{
	memset(q, 0, sizeof *q);
	q->op = op;
	if (!id_ok(id))
		return SMARM_EINVAL;
	strcpy(q->cs.cs_id, id);
	return 0;
}

int smarm_sup_start_child(smarm_pid_t sup, const char *id, smarm_actor_cb fn,
			  void *arg, int restart, uint64_t shutdown_ns,
			  uint64_t timeout_ns, smarm_pid_t *child)
{
	struct smarm__sup_ctl q;
	smarm_signal_t r = { 0 };
	int rc;
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	memset(&q, 0, sizeof q);
	q.op = SMARM__SUP_OP_START;
	if (id == NULL)
		q.anon = true;
	else if (!id_ok(id))
		return SMARM_EINVAL;
	else
		strcpy(q.cs.cs_id, id);
	if (fn == NULL || restart < SMARM_SUP_PERMANENT ||
	    restart > SMARM_SUP_TEMPORARY)
		return SMARM_EINVAL;
	q.cs.cs_fn = fn;
	q.cs.cs_arg = arg;
	q.cs.cs_restart = restart;
	q.cs.cs_shutdown = shutdown_ns;
	rc = sup_call(sup, &q, timeout_ns, &r);
	if (rc == 0)
		rc = r.how;
	if (taken_or_ok(rc) && child != NULL)
		*child = r.from; /* EEXIST: OTP's {already_started, Pid} */
	return rc;
}

int smarm_sup_start_child_spec(smarm_pid_t sup, const smarm_sup_spec_t *child,
			       uint64_t timeout_ns, smarm_pid_t *pid,
			       intptr_t *info)
{
	struct smarm__sup_ctl q;
	smarm_signal_t r = { 0 };
	int rc;
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (child == NULL)
		return SMARM_EINVAL;
	if (child->sp_n != 1 || child->sp_bad != 0 ||
	    child->sp_kids[0].cs_tfn != NULL) /* a template is no child */
		return SMARM_EBADSPEC;
	memset(&q, 0, sizeof q);
	q.op = SMARM__SUP_OP_START;
	q.cs = child->sp_kids[0];
	rc = sup_call(sup, &q, timeout_ns, &r);
	if (rc == 0)
		rc = r.how;
	if (taken_or_ok(rc) && pid != NULL)
		*pid = r.from; /* EEXIST: OTP's {already_started, Pid} */
	if (rc == 0 && info != NULL)
		*info = (intptr_t)r.ref;
	return rc;
}

int smarm_sup_start_child_args(smarm_pid_t sup, void *extra,
			       uint64_t timeout_ns, smarm_pid_t *pid,
			       intptr_t *info)
{
	struct smarm__sup_ctl q;
	smarm_signal_t r = { 0 };
	int rc;
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	memset(&q, 0, sizeof q);
	q.op = SMARM__SUP_OP_START_ARGS;
	q.cs.cs_extra = extra;
	rc = sup_call(sup, &q, timeout_ns, &r);
	if (rc == 0)
		rc = r.how;
	if (taken_or_ok(rc) && pid != NULL)
		*pid = r.from; /* EEXIST: OTP's {already_started, Pid} */
	if (rc == 0 && info != NULL)
		*info = (intptr_t)r.ref;
	return rc;
}

int smarm_sup_terminate_child_pid(smarm_pid_t sup, smarm_pid_t pid,
				  uint64_t timeout_ns)
{
	struct smarm__sup_ctl q;
	smarm_signal_t r = { 0 };
	int rc;
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (pid.id == 0)
		return SMARM_EINVAL;
	memset(&q, 0, sizeof q);
	q.op = SMARM__SUP_OP_TERMINATE_PID;
	q.pid = pid.id;
	rc = sup_call(sup, &q, timeout_ns, &r);
	return rc != 0 ? rc : r.how;
}

static int id_call(smarm_pid_t sup, int op, const char *id, uint64_t timeout_ns,
		   smarm_pid_t *child, intptr_t *info)
{
	struct smarm__sup_ctl q;
	smarm_signal_t r = { 0 };
	int rc;
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	rc = id_req(&q, op, id);
	if (rc == 0)
		rc = sup_call(sup, &q, timeout_ns, &r);
	if (rc == 0)
		rc = r.how;
	if (taken_or_ok(rc) && child != NULL)
		*child = r.from; /* EEXIST: OTP's {already_started, Pid} */
	if (rc == 0 && info != NULL)
		*info = (intptr_t)r.ref;
	return rc;
}

int smarm_sup_terminate_child(smarm_pid_t sup, const char *id,
			      uint64_t timeout_ns)
{
	return id_call(sup, SMARM__SUP_OP_TERMINATE, id, timeout_ns, NULL,
		       NULL);
}

int smarm_sup_restart_child(smarm_pid_t sup, const char *id,
			    uint64_t timeout_ns, smarm_pid_t *child)
{
	return id_call(sup, SMARM__SUP_OP_RESTART, id, timeout_ns, child, NULL);
}

int smarm_sup_restart_child_ex(smarm_pid_t sup, const char *id,
			       uint64_t timeout_ns, smarm_pid_t *pid,
			       intptr_t *info)
{
	return id_call(sup, SMARM__SUP_OP_RESTART, id, timeout_ns, pid, info);
}

int smarm_sup_delete_child(smarm_pid_t sup, const char *id, uint64_t timeout_ns)
{
	return id_call(sup, SMARM__SUP_OP_DELETE, id, timeout_ns, NULL, NULL);
}

/* The children of sup (*items malloc'd, *n of them), or a status. */
static int which_call(smarm_pid_t sup, uint64_t timeout_ns,
		      smarm_sup_child_info_t **items, size_t *n)
{
	struct smarm__sup_ctl q;
	smarm_signal_t r = { 0 };
	int rc;
	memset(&q, 0, sizeof q);
	q.op = SMARM__SUP_OP_WHICH;
	rc = sup_call(sup, &q, timeout_ns, &r);
	if (rc == 0)
		rc = r.how;
	if (rc != 0)
		return rc;
	*n = (size_t)r.ref;
	*items = (smarm_sup_child_info_t *)r.reason;
	return 0;
}

/* The checks of both which_children calls (buf_ok: buf may hold cap
 * entries), then the call: the caller frees *items. */
static int which_checked(smarm_pid_t sup, bool buf_ok, size_t *n,
			 uint64_t timeout_ns, smarm_sup_child_info_t **items)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (n == NULL || !buf_ok)
		return SMARM_EINVAL;
	return which_call(sup, timeout_ns, items, n);
}

int smarm_sup_which_children(smarm_pid_t sup, smarm_sup_child_t *buf,
			     size_t cap, size_t *n, uint64_t timeout_ns)
{
	smarm_sup_child_info_t *items;
	int rc = which_checked(sup, buf != NULL || cap == 0, n, timeout_ns,
			       &items);
	if (rc != 0)
		return rc;
	for (size_t k = 0; k < *n && k < cap; k++) {
		memcpy(buf[k].id, items[k].id, sizeof buf[k].id);
		buf[k].pid = items[k].pid;
		buf[k].restart = items[k].restart;
	}
	free(items);
	return 0;
}

/* The record's first version ends at state; significant went into
 * its tail padding, so the stride of a first-version array is
 * sizeof(smarm_sup_child_info_t) still (otp.h). */
_Static_assert(SMARM_SUP_CHILD_INFO_MIN ==
		       offsetof(smarm_sup_child_info_t, state) + sizeof(int),
	       "SMARM_SUP_CHILD_INFO_MIN is the first version's fields");
_Static_assert(sizeof(smarm_sup_child_info_t) ==
		       (SMARM_SUP_CHILD_INFO_MIN +
			_Alignof(smarm_sup_child_info_t) - 1) /
			       _Alignof(smarm_sup_child_info_t) *
			       _Alignof(smarm_sup_child_info_t),
	       "smarm_sup_child_info_t grew: its stride changed");

int smarm_sup_which_children_sized(smarm_pid_t sup, void *buf, size_t item_size,
				   size_t cap, size_t *n, uint64_t timeout_ns)
{
	smarm_sup_child_info_t *items;
	size_t known = sizeof *items;
	int rc;
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (item_size < SMARM_SUP_CHILD_INFO_MIN ||
	    (cap > 0 && item_size > SIZE_MAX / cap))
		return SMARM_EINVAL;
	rc = which_checked(sup, buf != NULL || cap == 0, n, timeout_ns, &items);
	if (rc != 0)
		return rc;
	for (size_t k = 0; k < *n && k < cap; k++) {
		char *dst = (char *)buf + k * item_size;
		memcpy(dst, &items[k], item_size < known ? item_size : known);
		if (item_size > known) /* fields this library does not know */
			memset(dst + known, 0, item_size - known);
	}
	free(items);
	return 0;
}

int smarm_sup_which_children_ex(smarm_pid_t sup, smarm_sup_child_info_t *buf,
				size_t cap, size_t *n, uint64_t timeout_ns)
{
	return smarm_sup_which_children_sized(sup, buf, sizeof *buf, cap, n,
					      timeout_ns);
}

int smarm_sup_count_children_ex(smarm_pid_t sup, size_t *specs, size_t *active,
				size_t *supervisors, size_t *workers,
				uint64_t timeout_ns)
{
	struct smarm__sup_ctl q;
	smarm_signal_t r = { 0 };
	int rc;
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (specs == NULL && active == NULL && supervisors == NULL &&
	    workers == NULL)
		return SMARM_EINVAL;
	memset(&q, 0, sizeof q);
	q.op = SMARM__SUP_OP_COUNT;
	rc = sup_call(sup, &q, timeout_ns, &r);
	if (rc == 0)
		rc = r.how;
	if (rc != 0)
		return rc;
	if (specs != NULL)
		*specs = (size_t)(r.ref >> 32);
	if (active != NULL)
		*active = (size_t)(r.ref & 0xffffffffu);
	if (supervisors != NULL)
		*supervisors = (size_t)((uint64_t)r.reason >> 32);
	if (workers != NULL)
		*workers = (size_t)((uint64_t)r.reason & 0xffffffffu);
	return 0;
}

int smarm_sup_count_children(smarm_pid_t sup, size_t *specs, size_t *active,
			     uint64_t timeout_ns)
{
	if (smarm__current_node() == NULL)
		return SMARM_ENOTACTOR;
	if (specs == NULL && active == NULL)
		return SMARM_EINVAL;
	return smarm_sup_count_children_ex(sup, specs, active, NULL, NULL,
					   timeout_ns);
}

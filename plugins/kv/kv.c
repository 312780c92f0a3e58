/* SPDX-License-Identifier: MIT */
/*
 * kv.c - the "kv" gen_server behaviour: a store of bytes by string key.
 *
 *     call put(str, bytes) -> bool   store; true if the key was new
 *     call get(str) -> bytes         the value (empty if none)
 *     call del(str) -> bool          remove; true if it was there
 *     call size() -> u64             the number of keys
 *
 * A list, searched linearly: a demonstration, not a database.
 */
#include <smarm/smarm_plugin.h>

#include <stdlib.h>
#include <string.h>

struct entry {
	struct entry *next;
	char *key;
	void *val;
	size_t len;
};

struct kv {
	struct entry *head;
	uint64_t n;
};

static int kv_create(const char *args, void **state)
{
	(void)args;
	*state = calloc(1, sizeof(struct kv));
	return *state != NULL ? 0 : SMARM_ENOMEM;
}

static void kv_destroy(void *state)
{
	struct kv *kv = state;
	while (kv->head != NULL) {
		struct entry *e = kv->head;
		kv->head = e->next;
		free(e->key);
		free(e->val);
		free(e);
	}
	free(kv);
}

static struct entry **find(struct kv *kv, const char *key)
{
	struct entry **pp = &kv->head;
	while (*pp != NULL && strcmp((*pp)->key, key) != 0)
		pp = &(*pp)->next;
	return pp;
}

static bool put(void *state, smarm_gs_ctx_t *cx, const char *key,
		const void *val, size_t len)
{
	struct kv *kv = state;
	struct entry **pp = find(kv, key), *e = *pp;
	void *copy = malloc(len ? len : 1);
	(void)cx;
	if (copy == NULL)
		smarm_actor_crash(SMARM_ENOMEM);
	memcpy(copy, val, len);
	if (e != NULL) {
		free(e->val);
		e->val = copy;
		e->len = len;
		return false;
	}
	e = calloc(1, sizeof *e);
	if (e == NULL || (e->key = strdup(key)) == NULL)
		smarm_actor_crash(SMARM_ENOMEM);
	e->val = copy;
	e->len = len;
	e->next = kv->head;
	kv->head = e;
	kv->n++;
	return true;
}

static smarm_bytes_t get(void *state, smarm_gs_ctx_t *cx, const char *key)
{
	struct entry *e = *find(state, key);
	smarm_bytes_t b = { "", 0 };
	(void)cx;
	if (e != NULL) {
		b.ptr = e->val;
		b.len = e->len;
	}
	return b;
}

static bool del(void *state, smarm_gs_ctx_t *cx, const char *key)
{
	struct kv *kv = state;
	struct entry **pp = find(kv, key), *e = *pp;
	(void)cx;
	if (e == NULL)
		return false;
	*pp = e->next;
	free(e->key);
	free(e->val);
	free(e);
	kv->n--;
	return true;
}

static uint64_t size(void *state, smarm_gs_ctx_t *cx)
{
	(void)cx;
	return ((struct kv *)state)->n;
}

static const smarm_handler_t handlers[] = {
	{ "put", (void (*)(void))put },
	{ "get", (void (*)(void))get },
	{ "del", (void (*)(void))del },
	{ "size", (void (*)(void))size },
};

static const smarm_gs_desc_t kv = {
	.struct_size = sizeof(smarm_gs_desc_t),
	.name = "kv",
	.protocol = "call put(str, bytes) -> bool\n"
		    "call get(str) -> bytes\n"
		    "call del(str) -> bool\n"
		    "call size() -> u64\n",
	.handlers = handlers,
	.n_handlers = sizeof handlers / sizeof handlers[0],
	.create = kv_create,
	.destroy = kv_destroy,
};

static const smarm_gs_desc_t *const servers[] = { &kv };

SMARM_PLUGIN_DEFINE_SERVERS("kv", servers);

/* SPDX-License-Identifier: MIT */
/*
 * fuzz_app.c - libFuzzer harness for smarm-run's application files
 * (tools/app.c): any bytes either parse into a tree or fail with one
 * message of the form "file:line[:col]: text", never crash, leak or
 * overrun. A tree that parses is walked: every child's parent link
 * holds and every server has an id. Seeds: corpus/fuzz_app/.
 */
#include "../../tools/app.h"

#include <stdlib.h>
#include <string.h>

#define FILE_NAME "fuzz/x.app"

static size_t walk(const struct app_node *n)
{
	size_t c = 1;
	if (n->an_kind == APP_SUP)
		for (size_t i = 0; i < n->an_nkids; i++) {
			if (n->an_kids[i]->an_parent != n)
				abort();
			c += walk(n->an_kids[i]);
		}
	else if (n->an_kind != APP_SERVER || n->an_id[0] == '\0')
		abort();
	return c;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct app *a = NULL;
	char err[APP_ERR_MAX];
	int rc = app_parse(FILE_NAME, (const char *)data, size, &a, err,
			   sizeof err);
	if (rc != 0) {
		if (a != NULL || strncmp(err, FILE_NAME ":", 11) != 0 ||
		    strlen(err) >= sizeof err)
			abort();
		return 0;
	}
	if (a == NULL || a->a_root == NULL || a->a_root->an_kind != APP_SUP)
		abort();
	(void)walk(a->a_root);
	app_free(a);
	return 0;
}

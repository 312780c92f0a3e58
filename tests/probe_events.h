/* SPDX-License-Identifier: MIT */
/*
 * probe_events.h - the event log of the probe test plugin
 * (tests/plugins/probe.c), read through its plain export probe_events
 * from the copy the loader opened ($SMARM_TEST_PROBE), for the suites
 * that start probe servers.
 */
#ifndef SMARM_TEST_PROBE_EVENTS_H
#define SMARM_TEST_PROBE_EVENTS_H

#include <dlfcn.h>
#include <smarm/smarm_plugin.h>
#include <stddef.h>
#include <stdlib.h>

/* The probe's event log since the last read ("(unloaded)" if the plugin
 * is not loaded); valid until the next call. */
static inline const char *probe_events_read(void)
{
	static char buf[8192];
	void *dl = dlopen(getenv("SMARM_TEST_PROBE"), RTLD_NOW | RTLD_NOLOAD);
	void (*f)(char *, size_t);
	buf[0] = '\0';
	if (dl == NULL)
		return "(unloaded)";
	*(void **)&f = dlsym(dl, "probe_events");
	f(buf, sizeof buf);
	dlclose(dl);
	return buf;
}

/* The token the probe's "later" took last (probe.c's probe_token), or
 * NULL (the plugin not loaded, or no such export). */
static inline smarm_reply_t *probe_token(void)
{
	void *dl = dlopen(getenv("SMARM_TEST_PROBE"), RTLD_NOW | RTLD_NOLOAD);
	smarm_reply_t *(*f)(void);
	smarm_reply_t *t = NULL;
	if (dl == NULL)
		return NULL;
	*(void **)&f = dlsym(dl, "probe_token");
	if (f != NULL)
		t = f();
	dlclose(dl);
	return t;
}

#endif /* SMARM_TEST_PROBE_EVENTS_H */

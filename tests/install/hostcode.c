/* SPDX-License-Identifier: MIT */
/*
 * hostcode.c - actor code in a shared object of the host's own,
 * libhostcode.so, beside a statically linked libsmarm: the only text
 * such a host can make preemptible (static_preempt.c, "so" mode).
 */
#include "spin.h"

unsigned long host_spin(atomic_int *flag, unsigned long limit);

unsigned long host_spin(atomic_int *flag, unsigned long limit)
{
	return spin_until(flag, limit);
}

/* SPDX-License-Identifier: MIT */
/*
 * smarm/version.h - the compile-time version of the libsmarm API.
 *
 * Policy: while the major is 0 the SONAME is libsmarm.so.0 and every ABI
 * change adds a new symbol-version node (SMARM_0.1, SMARM_0.2, ...) that
 * inherits the previous one; nothing is removed or changed in place. From
 * 1.0 on, the same major means a compatible ABI. Compare SMARM_VERSION_HEX
 * with smarm_version() at run time to check that header and library match.
 */
#ifndef SMARM_VERSION_H
#define SMARM_VERSION_H

#define SMARM_VERSION_MAJOR 0
#define SMARM_VERSION_MINOR 5
#define SMARM_VERSION_PATCH 0

#define SMARM_VERSION_HEX                                                      \
	((SMARM_VERSION_MAJOR << 16) | (SMARM_VERSION_MINOR << 8) |            \
	 (SMARM_VERSION_PATCH))

#define SMARM__STR(x) #x
#define SMARM__XSTR(x) SMARM__STR(x)
#define SMARM_VERSION_STRING                                                   \
	SMARM__XSTR(SMARM_VERSION_MAJOR)                                       \
	"." SMARM__XSTR(SMARM_VERSION_MINOR) "." SMARM__XSTR(                  \
		SMARM_VERSION_PATCH)

#endif /* SMARM_VERSION_H */

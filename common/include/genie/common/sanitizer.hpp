// SPDX-License-Identifier: Apache-2.0
// Which sanitizer this translation unit is compiled for: gcc says so with __SANITIZE_*__, clang with __has_feature.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define GENIE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GENIE_ASAN 1
#endif
#endif
#ifndef GENIE_ASAN
#define GENIE_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define GENIE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GENIE_TSAN 1
#endif
#endif
#ifndef GENIE_TSAN
#define GENIE_TSAN 0
#endif

/* SPDX-License-Identifier: MIT */
/*
 * A small unit-test harness.
 *
 *   TEST(sframe_decode_v2) {
 *           struct sfp_sframe *sf = NULL;
 *           if (!ASSERT_OK(sfp_sframe__open_mem(buf, len, NULL, &sf)))
 *                   goto out;
 *           ASSERT_EQ(sfp_sframe__num_funcs(sf), 3);
 *   out:
 *           sfp_sframe__free(&sf);
 *   }
 *
 * ASSERT_* print what differed and return false, so a test decides itself
 * whether to go on; any failed assert fails the test.  test_skip() marks a
 * test skipped with a reason (something this machine lacks).  Each binary
 * prints one "PASS:", "FAIL:" or "SKIP:" line per test, which
 * tests/run-tests.sh counts.
 */
#ifndef SFP_TEST_H
#define SFP_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*sfp_test_fn)(void);

void sfp_test_register(const char *name, sfp_test_fn fn);
void sfp_test_fail_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Directory with fixtures (tests/data) and the shared test vectors. */
const char *test_data_dir(void);
const char *test_vectors_dir(void);
/* Scratch directory for this test binary (created on demand). */
const char *test_tmp_dir(void);

#define TEST(name)                                                    \
	static void test_##name(void);                                \
	__attribute__((constructor)) static void reg_##name(void)     \
	{                                                             \
		sfp_test_register(#name, test_##name);                \
	}                                                             \
	static void test_##name(void)

#define ASSERT_TRUE(cond)                                                 \
	({                                                                \
		bool ok_ = !!(cond);                                      \
		if (!ok_)                                                 \
			sfp_test_fail_at(__FILE__, __LINE__, "%s is false", \
					 #cond);                          \
		ok_;                                                      \
	})

#define ASSERT_FALSE(cond) ASSERT_TRUE(!(cond))

#define ASSERT_EQ(a, b)                                                      \
	({                                                                   \
		int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                \
		bool ok_ = a_ == b_;                                         \
		if (!ok_)                                                    \
			sfp_test_fail_at(__FILE__, __LINE__,                 \
					 "%s == %s: %" PRId64 " (0x%" PRIx64 \
					 ") != %" PRId64 " (0x%" PRIx64 ")", \
					 #a, #b, a_, (uint64_t)a_, b_,       \
					 (uint64_t)b_);                      \
		ok_;                                                         \
	})

#define ASSERT_NE(a, b)                                                    \
	({                                                                 \
		int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);              \
		bool ok_ = a_ != b_;                                       \
		if (!ok_)                                                  \
			sfp_test_fail_at(__FILE__, __LINE__,               \
					 "%s != %s: both %" PRId64, #a, #b, a_); \
		ok_;                                                       \
	})

#define ASSERT_GE(a, b)                                                    \
	({                                                                 \
		int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);              \
		bool ok_ = a_ >= b_;                                       \
		if (!ok_)                                                  \
			sfp_test_fail_at(__FILE__, __LINE__,               \
					 "%s >= %s: %" PRId64 " < %" PRId64, \
					 #a, #b, a_, b_);                  \
		ok_;                                                       \
	})

/* An API call that must succeed (return >= 0). */
#define ASSERT_OK(expr)                                                    \
	({                                                                 \
		long long r_ = (long long)(expr);                          \
		bool ok_ = r_ >= 0;                                        \
		if (!ok_)                                                  \
			sfp_test_fail_at(__FILE__, __LINE__,               \
					 "%s failed: %lld", #expr, r_);    \
		ok_;                                                       \
	})

/* An API call that must fail with exactly this (negative) error. */
#define ASSERT_ERR(expr, err)                                              \
	({                                                                 \
		long long r_ = (long long)(expr);                          \
		bool ok_ = r_ == (long long)(err);                         \
		if (!ok_)                                                  \
			sfp_test_fail_at(__FILE__, __LINE__,               \
					 "%s returned %lld, want %s (%d)", \
					 #expr, r_, #err, (int)(err));     \
		ok_;                                                       \
	})

#define ASSERT_STREQ(a, b)                                                 \
	({                                                                 \
		const char *a_ = (a), *b_ = (b);                           \
		bool ok_ = a_ && b_ && !strcmp(a_, b_);                    \
		if (!ok_)                                                  \
			sfp_test_fail_at(__FILE__, __LINE__,               \
					 "%s == %s: \"%s\" != \"%s\"", #a, \
					 #b, a_ ? a_ : "(null)",           \
					 b_ ? b_ : "(null)");              \
		ok_;                                                       \
	})

#define ASSERT_NOT_NULL(p) ASSERT_TRUE((p) != NULL)

#endif /* SFP_TEST_H */

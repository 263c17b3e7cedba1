/* Small helpers that several kernels use. Each kernel is its own translation unit, so these are
 * static inline: every module gets its own copy at compile time, and they stay in one source. */
#ifndef POLYTOK_KERNEL_UTIL_H
#define POLYTOK_KERNEL_UTIL_H

#include <Python.h>
#include <stdint.h>

/* The UTF-8 bytes of one code point into out[0..3]; returns their count. A lone surrogate gives
 * its three bytes, as Python's "surrogatepass" does (callers that refuse surrogates check first). */
static inline int utf8_encode(Py_UCS4 cp, unsigned char out[4]) {
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A 64-bit avalanche (MurmurHash3's finaliser): every input bit reaches every output bit, so both
 * the low bits (a table slot) and the high bits (a check) of a hash are well mixed. */
static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
}

#endif

/* Hand-written scanners for the split patterns of the well-known tokenizers.
 *
 * polytok._kernels.split: scan(scanner, text) -> list[str] is ``findall`` of one known pattern
 * (the pieces, in order), as the pure path's `regex` module finds them. The pattern strings
 * and the scanner each one runs are listed in polytok/regex/scanners.py; any other pattern
 * stays on `regex`. The character data (split_tables.h) is generated from `regex` itself by
 * tools/gen_split_tables.py, through the same OnigPattern view the pure path uses.
 *
 * Each scanner reproduces, at one start position, the leftmost-first backtracking search of
 * its pattern: the alternatives in their order, each with the backtracking its quantifiers
 * allow. The same approach as llama.cpp's src/unicode.cpp (unicode_regex_split_custom_gpt2 /
 * _llama3) and tiktoken's pattern engines, written here from the patterns themselves:
 *
 *   GPT2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
 *           (also r50k's possessive spelling, with \s++$ and a final \s: the same matches)
 *   LLAMA3  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
 *           | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+        (QWEN2: \p{N})
 *   CL100K  the LLAMA3 rules with \s++$ tried before \s*[\r\n] (a space run that ends the text
 *           is one piece); its possessive quantifiers change no match
 *   O200K   [^\r\n\p{L}\p{N}]?UP*LO+C?|[^\r\n\p{L}\p{N}]?UP+LO*C?|\p{N}{1,3}
 *           | ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 *           UP = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], LO = [\p{Ll}\p{Lm}\p{Lo}\p{M}], C = the
 *           case-insensitive contractions (TEKKEN: no C, and \p{N})
 *
 * Every alternative reads at least one char, so matches are never empty and ``findall``'s
 * pieces are exactly the matches. The scan runs without the GIL into an array of end offsets;
 * the substrings are made afterwards.
 *
 * scan_collapsed runs the GPT2 / LLAMA3 / QWEN2 scanners over llama.cpp's collapsed text (the
 * one-byte-a-code-point view polytok/pre_tokenizers/llama_regex_split.py matches llama.cpp's
 * hand-written splitters against, after src/unicode.cpp unicode_regex_split), with a 256-entry
 * table of that alphabet read off Python ``re`` as that module runs it; it returns the bounds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "kernel_api.h"
#include "split_tables.h"

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE static inline
#endif

enum family { FAMILY_GPT2, FAMILY_LLAMA3, FAMILY_O200K };

typedef struct {
    const char *name;
    int family;
    int digits;            /* the most chars of \p{N} in one match (0: \p{N}+) */
    int space_run_at_end;  /* \s++$ first (cl100k) */
    int suffix;            /* O200K: the contractions after a word */
} Scanner;

static const Scanner SCANNERS[] = {
    {"gpt2", FAMILY_GPT2, 0, 0, 0},
    {"llama3", FAMILY_LLAMA3, 3, 0, 0},
    {"qwen2", FAMILY_LLAMA3, 1, 0, 0},
    {"cl100k", FAMILY_LLAMA3, 3, 1, 0},
    {"o200k", FAMILY_O200K, 3, 0, 1},
    {"tekken", FAMILY_O200K, 1, 0, 0},
};
#define N_SCANNERS ((Py_ssize_t)(sizeof(SCANNERS) / sizeof(SCANNERS[0])))

#define OTHER_MASK (SPLIT_L | SPLIT_N | SPLIT_WS)  /* none of these: [^\s\p{L}\p{N}] */

typedef struct {
    const void *data;
    int kind;
    Py_ssize_t n;
    const uint8_t *collapsed;  /* NULL, or split_collapsed: the text is llama.cpp's one-byte view */
} Text;

ALWAYS_INLINE Py_UCS4 at(const Text *t, Py_ssize_t i) { return PyUnicode_READ(t->kind, t->data, i); }

ALWAYS_INLINE unsigned bits_of(Py_UCS4 c) {
    if (c >= 0x110000) return 0;
    return split_stage2[(size_t)split_stage1[c >> 8] * 256u + (c & 0xFFu)];
}

ALWAYS_INLINE unsigned char_bits(const Text *t, Py_UCS4 c) {
    return t->collapsed ? t->collapsed[c & 0xFFu] : bits_of(c);  /* collapsed text is 1-byte kind */
}

ALWAYS_INLINE unsigned bits_at(const Text *t, Py_ssize_t i) { return char_bits(t, at(t, i)); }

ALWAYS_INLINE int is_crlf(Py_UCS4 c) { return c == '\r' || c == '\n'; }

/* the end of the run of chars having any of `mask` from i */
ALWAYS_INLINE Py_ssize_t run_any(const Text *t, Py_ssize_t i, unsigned mask) {
    while (i < t->n && (bits_at(t, i) & mask)) i++;
    return i;
}

/* the end of the run of [^\s\p{L}\p{N}] from i */
ALWAYS_INLINE Py_ssize_t run_other(const Text *t, Py_ssize_t i) {
    while (i < t->n && !(bits_at(t, i) & OTHER_MASK)) i++;
    return i;
}

/* whether c is letter (an index into SPLIT_FOLD_LETTERS), case-insensitively or not */
ALWAYS_INLINE int letter_is(Py_UCS4 c, int letter, int ci) {
    if (!ci) return c == (Py_UCS4)SPLIT_FOLD_LETTERS[letter];
    if (c == 0) return 0;  /* 0 pads the fold rows */
    for (int k = 0; k < 4; k++)
        if (split_fold[letter][k] == c) return 1;
    return 0;
}

enum { F_S, F_T, F_D, F_M, F_R, F_V, F_E, F_L };  /* SPLIT_FOLD_LETTERS "stdmrvel" */

/* the length of 's|'t|'re|'ve|'m|'ll|'d at i (t[i] is the apostrophe), or 0 */
ALWAYS_INLINE Py_ssize_t contraction(const Text *t, Py_ssize_t i, int ci) {
    if (i + 1 >= t->n) return 0;
    Py_UCS4 a = at(t, i + 1);
    if (letter_is(a, F_S, ci) || letter_is(a, F_T, ci) || letter_is(a, F_M, ci) || letter_is(a, F_D, ci))
        return 2;
    if (i + 2 >= t->n) return 0;
    Py_UCS4 b = at(t, i + 2);
    if ((letter_is(a, F_R, ci) || letter_is(a, F_V, ci)) && letter_is(b, F_E, ci)) return 3;
    if (letter_is(a, F_L, ci) && letter_is(b, F_L, ci)) return 3;
    return 0;
}

/* a run of white space starting at i (t[i] is \s); `crlf_first`: \s*[\r\n]+ is tried first */
ALWAYS_INLINE Py_ssize_t space_match(const Text *t, Py_ssize_t i, int crlf_first, int at_end_first) {
    Py_ssize_t k = run_any(t, i, SPLIT_WS);
    if (at_end_first && k == t->n) return k;                 /* \s++$ */
    if (crlf_first)                                           /* \s*[\r\n]+: ends after the last break */
        for (Py_ssize_t p = k - 1; p >= i; p--)
            if (is_crlf(at(t, p))) return p + 1;
    if (k == t->n || k - i == 1) return k;                    /* \s+(?!\S), or \s+ / \s of one char */
    return k - 1;                                             /* \s+(?!\S) leaves the last space */
}

ALWAYS_INLINE Py_ssize_t digits_match(const Text *t, Py_ssize_t i, int digits) {
    if (digits == 0) return run_any(t, i, SPLIT_N);
    Py_ssize_t e = i;
    while (e < t->n && e - i < digits && (bits_at(t, e) & SPLIT_N)) e++;
    return e;
}

/* ' ?[^\s\p{L}\p{N}]+' and what may follow it ([\r\n]* or [\r\n/]*), or -1 */
ALWAYS_INLINE Py_ssize_t other_match(const Text *t, Py_ssize_t i, Py_UCS4 c, int slash) {
    Py_ssize_t j = i;
    if (c == ' ') {
        if (i + 1 >= t->n || (bits_at(t, i + 1) & OTHER_MASK)) return -1;
        j = i + 1;
    } else if (char_bits(t, c) & OTHER_MASK) {
        return -1;
    }
    Py_ssize_t e = run_other(t, j);
    while (e < t->n) {
        Py_UCS4 d = at(t, e);
        if (!(is_crlf(d) || (slash && d == '/'))) break;
        e++;
    }
    return e;
}

ALWAYS_INLINE Py_ssize_t gpt2_at(const Text *t, Py_ssize_t i) {
    Py_UCS4 c = at(t, i);
    if (c == '\'') {
        Py_ssize_t k = contraction(t, i, 0);
        if (k) return i + k;
    }
    Py_ssize_t j = (c == ' ' && i + 1 < t->n) ? i + 1 : i;
    unsigned b = bits_at(t, j);
    if (b & SPLIT_L) return run_any(t, j, SPLIT_L);
    if (b & SPLIT_N) return run_any(t, j, SPLIT_N);
    if (!(b & OTHER_MASK)) return run_other(t, j);
    /* a space before white space, or white space: ' ?' backtracking finds no other match */
    return space_match(t, i, 0, 0);
}

ALWAYS_INLINE Py_ssize_t llama3_at(const Text *t, Py_ssize_t i, const Scanner *s) {
    Py_UCS4 c = at(t, i);
    if (c == '\'') {
        Py_ssize_t k = contraction(t, i, 1);
        if (k) return i + k;
    }
    unsigned b = char_bits(t, c);
    if (b & SPLIT_L) return run_any(t, i, SPLIT_L);
    if (!(b & SPLIT_N) && !is_crlf(c) && i + 1 < t->n && (bits_at(t, i + 1) & SPLIT_L))
        return run_any(t, i + 1, SPLIT_L);                    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (b & SPLIT_N) return digits_match(t, i, s->digits);
    Py_ssize_t e = other_match(t, i, c, 0);
    if (e >= 0) return e;
    return space_match(t, i, 1, s->space_run_at_end);
}

/* UP*LO+ from i (o200k's first word rule without its prefix), or -1 */
ALWAYS_INLINE Py_ssize_t upper_lower(const Text *t, Py_ssize_t i) {
    Py_ssize_t q = run_any(t, i, SPLIT_UP);
    if (q < t->n && (bits_at(t, q) & SPLIT_LO)) return run_any(t, q, SPLIT_LO);
    for (Py_ssize_t m = q - 1; m >= i; m--)                    /* UP* gives back up to a LO char */
        if (bits_at(t, m) & SPLIT_LO) return m + 1;
    return -1;
}

ALWAYS_INLINE Py_ssize_t o200k_at(const Text *t, Py_ssize_t i, const Scanner *s) {
    Py_UCS4 c = at(t, i);
    unsigned b = char_bits(t, c);
    int prefix = !(b & (SPLIT_L | SPLIT_N)) && !is_crlf(c) && i + 1 < t->n;
    Py_ssize_t e = -1;
    if (prefix) e = upper_lower(t, i + 1);
    if (e < 0) e = upper_lower(t, i);
    if (e < 0 && prefix && (bits_at(t, i + 1) & SPLIT_UP)) e = run_any(t, run_any(t, i + 1, SPLIT_UP), SPLIT_LO);
    if (e < 0 && (b & SPLIT_UP)) e = run_any(t, run_any(t, i, SPLIT_UP), SPLIT_LO);
    if (e >= 0) {
        if (s->suffix && e < t->n && at(t, e) == '\'') e += contraction(t, e, 1);
        return e;
    }
    if (b & SPLIT_N) return digits_match(t, i, s->digits);
    e = other_match(t, i, c, 1);
    if (e >= 0) return e;
    return space_match(t, i, 1, 0);
}

typedef struct {
    Py_ssize_t *ends;
    Py_ssize_t count, capacity;
} Ends;

/* the end offsets of every match; 0 on success, -1 when out of memory */
ALWAYS_INLINE int scan_text(const Text *t, const Scanner *s, Ends *out) {
    Py_ssize_t i = 0;
    while (i < t->n) {
        Py_ssize_t e;
        switch (s->family) {
        case FAMILY_GPT2: e = gpt2_at(t, i); break;
        case FAMILY_LLAMA3: e = llama3_at(t, i, s); break;
        default: e = o200k_at(t, i, s); break;
        }
        if (e <= i || e > t->n) e = i + 1;  /* cannot happen (every match is non-empty); never loop */
        if (out->count == out->capacity) {
            Py_ssize_t grown = out->capacity < t->n / 2 ? out->capacity * 2 : t->n;
            if (grown <= out->capacity || (size_t)grown > PY_SSIZE_T_MAX / sizeof(Py_ssize_t)) return -1;
            Py_ssize_t *more = PyMem_RawRealloc(out->ends, (size_t)grown * sizeof(Py_ssize_t));
            if (more == NULL) return -1;
            out->ends = more;
            out->capacity = grown;
        }
        out->ends[out->count++] = e;
        i = e;
    }
    return 0;
}

static int scan_kind1(const Text *t, const Scanner *s, Ends *out) {
    Text k = {t->data, PyUnicode_1BYTE_KIND, t->n, NULL};
    return scan_text(&k, s, out);
}

static int scan_kind2(const Text *t, const Scanner *s, Ends *out) {
    Text k = {t->data, PyUnicode_2BYTE_KIND, t->n, NULL};
    return scan_text(&k, s, out);
}

static int scan_kind4(const Text *t, const Scanner *s, Ends *out) {
    Text k = {t->data, PyUnicode_4BYTE_KIND, t->n, NULL};
    return scan_text(&k, s, out);
}

static int scan_collapsed(const Text *t, const Scanner *s, Ends *out) {
    Text k = {t->data, PyUnicode_1BYTE_KIND, t->n, split_collapsed};
    return scan_text(&k, s, out);
}

#define RELEASE_GIL_FROM 4096  /* chars: below this the scan is shorter than a GIL round trip */

typedef int (*ScanFn)(const Text *, const Scanner *, Ends *);

/* the match ends of a non-empty text into `out` (freed by the caller), or -1 with an exception set */
static int run_scan(ScanFn scan, const Text *t, const Scanner *s, Ends *out) {
    out->count = 0;
    out->capacity = t->n / 4 + 16;
    if (out->capacity > t->n) out->capacity = t->n;
    out->ends = PyMem_RawMalloc((size_t)out->capacity * sizeof(Py_ssize_t));
    if (out->ends == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int rc;
    if (t->n >= RELEASE_GIL_FROM) {
        Py_BEGIN_ALLOW_THREADS
        rc = scan(t, s, out);
        Py_END_ALLOW_THREADS
    } else {
        rc = scan(t, s, out);
    }
    if (rc < 0) {
        PyMem_RawFree(out->ends);
        out->ends = NULL;
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The capsule's `scan` (kernel_api.h): `scan_text` over code points, without the GIL. */
static int api_scan(Py_ssize_t scanner, const Py_UCS4 *cps, Py_ssize_t n, Py_ssize_t **ends, Py_ssize_t *capacity,
                    Py_ssize_t *count) {
    *count = 0;
    if (scanner < 0 || scanner >= N_SCANNERS) return 1;
    if (n == 0) return 0;
    if (*capacity < n) { /* room for every end: the scan never grows it then */
        if ((size_t)n > PY_SSIZE_T_MAX / sizeof(Py_ssize_t)) return -1;
        Py_ssize_t *more = PyMem_RawRealloc(*ends, (size_t)n * sizeof(Py_ssize_t));
        if (!more) return -1;
        *ends = more;
        *capacity = n;
    }
    Text t = {cps, PyUnicode_4BYTE_KIND, n, NULL};
    Ends out = {*ends, 0, *capacity};
    int rc = scan_text(&t, &SCANNERS[scanner], &out);
    *ends = out.ends;
    *capacity = out.capacity;
    *count = out.count;
    return rc < 0 ? -1 : 0;
}

static int scanner_arg(PyObject *arg, Py_ssize_t *id) {
    *id = PyLong_AsSsize_t(arg);
    if (*id == -1 && PyErr_Occurred()) return -1;
    if (*id < 0 || *id >= N_SCANNERS) {
        PyErr_Format(PyExc_ValueError, "no scanner %zd", *id);
        return -1;
    }
    return 0;
}

/* Pieces up to INTERN_MAX_CHARS long that repeat within one text are one str object: a text
 * repeats most of its short pieces, and a lookup in this per-call table is cheaper than making
 * (and later freeing) a new str; the model's caches then also find each repeat's hash stored. */
#define INTERN_MAX_CHARS 24
#define INTERN_MAX_SLOTS ((size_t)1 << 17)

typedef struct {
    Py_ssize_t start, len;
    PyObject *piece;  /* borrowed: the list being filled holds it; NULL marks a free slot */
} Interned;

static uint64_t hash_bytes(const unsigned char *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;  /* FNV-1a */
    for (size_t k = 0; k < n; k++) h = (h ^ p[k]) * 0x100000001b3ull;
    return h;
}

/* the list of the pieces of `text` ending at each of out->ends */
static PyObject *pieces_at(PyObject *text, const Text *t, const Ends *out) {
    PyObject *pieces = PyList_New(out->count);
    if (pieces == NULL) return NULL;
    size_t slots = 64;
    while (slots < INTERN_MAX_SLOTS && slots / 2 < (size_t)out->count) slots *= 2;
    Interned *table = PyMem_Calloc(slots, sizeof(Interned));
    if (table == NULL) {
        Py_DECREF(pieces);
        return PyErr_NoMemory();
    }
    size_t used = 0;
    const unsigned char *data = t->data;
    size_t width = (size_t)t->kind;
    Py_ssize_t start = 0;
    for (Py_ssize_t k = 0; k < out->count; k++) {
        Py_ssize_t end = out->ends[k], len = end - start;
        PyObject *piece = NULL;
        size_t at = 0;
        if (len <= INTERN_MAX_CHARS) {
            const unsigned char *bytes = data + (size_t)start * width;
            at = (size_t)hash_bytes(bytes, (size_t)len * width) & (slots - 1);
            for (; table[at].piece != NULL; at = (at + 1) & (slots - 1)) {
                if (table[at].len == len &&
                    memcmp(data + (size_t)table[at].start * width, bytes, (size_t)len * width) == 0) {
                    piece = table[at].piece;
                    Py_INCREF(piece);
                    break;
                }
            }
        }
        if (piece == NULL) {
            piece = PyUnicode_Substring(text, start, end);
            if (piece == NULL) {
                PyMem_Free(table);
                Py_DECREF(pieces);
                return NULL;
            }
            if (len <= INTERN_MAX_CHARS && used < slots / 2) {  /* half full at most: probes end */
                table[at].start = start;
                table[at].len = len;
                table[at].piece = piece;
                used++;
            }
        }
        PyList_SET_ITEM(pieces, k, piece);
        start = end;
    }
    PyMem_Free(table);
    return pieces;
}

static PyObject *split_scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "scan(scanner, text) takes 2 arguments");
        return NULL;
    }
    Py_ssize_t id;
    if (scanner_arg(args[0], &id) < 0) return NULL;
    PyObject *text = args[1];
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "scan() takes a str");
        return NULL;
    }
    Text t = {PyUnicode_DATA(text), PyUnicode_KIND(text), PyUnicode_GET_LENGTH(text), NULL};
    if (t.n == 0) return PyList_New(0);
    int (*scan)(const Text *, const Scanner *, Ends *) =
        t.kind == PyUnicode_1BYTE_KIND ? scan_kind1 : t.kind == PyUnicode_2BYTE_KIND ? scan_kind2 : scan_kind4;
    Ends out;
    if (run_scan(scan, &t, &SCANNERS[id], &out) < 0) return NULL;
    PyObject *pieces = pieces_at(text, &t, &out);
    PyMem_RawFree(out.ends);
    return pieces;
}

/* scan_collapsed(scanner, view, start, end) -> bytes: the (start, end) of every match in view[start:end]
 * as native int64 pairs, offsets into view; `view` is llama.cpp's collapsed text (latin-1 kind) */
static PyObject *split_scan_collapsed(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "scan_collapsed(scanner, view, start, end) takes 4 arguments");
        return NULL;
    }
    Py_ssize_t id;
    if (scanner_arg(args[0], &id) < 0) return NULL;
    PyObject *view = args[1];
    if (!PyUnicode_Check(view) || PyUnicode_KIND(view) != PyUnicode_1BYTE_KIND) {
        PyErr_SetString(PyExc_TypeError, "scan_collapsed() takes a collapsed (one byte a char) str");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[2]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t end = PyLong_AsSsize_t(args[3]);
    if (end == -1 && PyErr_Occurred()) return NULL;
    if (start < 0 || end < start || end > PyUnicode_GET_LENGTH(view)) {
        PyErr_SetString(PyExc_ValueError, "scan_collapsed(): start and end out of range");
        return NULL;
    }
    if (end == start) return PyBytes_FromStringAndSize(NULL, 0);
    Text t = {(const Py_UCS1 *)PyUnicode_DATA(view) + start, PyUnicode_1BYTE_KIND, end - start, NULL};
    Ends out;
    if (run_scan(scan_collapsed, &t, &SCANNERS[id], &out) < 0) return NULL;
    if ((size_t)out.count > PY_SSIZE_T_MAX / (2 * sizeof(int64_t))) {
        PyMem_RawFree(out.ends);
        return PyErr_NoMemory();
    }
    PyObject *bounds = PyBytes_FromStringAndSize(NULL, out.count * 2 * (Py_ssize_t)sizeof(int64_t));
    if (bounds == NULL) {
        PyMem_RawFree(out.ends);
        return NULL;
    }
    int64_t *pairs = (int64_t *)PyBytes_AS_STRING(bounds);
    Py_ssize_t from = start;
    for (Py_ssize_t k = 0; k < out.count; k++) {
        pairs[2 * k] = (int64_t)from;
        from = start + out.ends[k];
        pairs[2 * k + 1] = (int64_t)from;
    }
    PyMem_RawFree(out.ends);
    return bounds;
}

static PyObject *split_char_bits(PyObject *module, PyObject *arg) {
    unsigned long cp = PyLong_AsUnsignedLong(arg);
    if (cp == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    return PyLong_FromUnsignedLong(bits_of((Py_UCS4)(cp > 0x10FFFF ? 0x110000 : cp)));
}

static PyObject *split_collapsed_bits(PyObject *module, PyObject *arg) {
    unsigned long code = PyLong_AsUnsignedLong(arg);
    if (code == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    return PyLong_FromUnsignedLong(code < 256 ? split_collapsed[code] : 0);
}

static PyMethodDef split_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))split_scan, METH_FASTCALL,
     "scan(scanner, text) -> list[str]: the matches of the scanner's pattern (findall), in order."},
    {"scan_collapsed", (PyCFunction)(void (*)(void))split_scan_collapsed, METH_FASTCALL,
     "scan_collapsed(scanner, view, start, end) -> bytes: the match bounds in llama.cpp's collapsed text."},
    {"char_bits", split_char_bits, METH_O, "char_bits(code_point) -> int: the table bits (tests)."},
    {"collapsed_bits", split_collapsed_bits, METH_O, "collapsed_bits(byte) -> int: the collapsed table's bits."},
    {NULL, NULL, 0, NULL},
};

static int split_exec(PyObject *module) {
    PyObject *names = PyDict_New();
    if (names == NULL) return -1;
    for (Py_ssize_t k = 0; k < N_SCANNERS; k++) {
        PyObject *id = PyLong_FromSsize_t(k);
        if (id == NULL || PyDict_SetItemString(names, SCANNERS[k].name, id) < 0) {
            Py_XDECREF(id);
            Py_DECREF(names);
            return -1;
        }
        Py_DECREF(id);
    }
    if (PyModule_AddObject(module, "SCANNERS", names) < 0) {
        Py_DECREF(names);
        return -1;
    }
    if (PyModule_AddStringConstant(module, "REGEX_VERSION", SPLIT_REGEX_VERSION) < 0) return -1;
    static SplitAPI api = {N_SCANNERS, api_scan};
    PyObject *capsule = PyCapsule_New(&api, SPLIT_API_NAME, NULL);
    if (capsule == NULL) return -1;
    if (PyModule_AddObject(module, "_C_API", capsule) < 0) {
        Py_DECREF(capsule);
        return -1;
    }
    static const struct { const char *name; long bit; } bits[] = {
        {"L", SPLIT_L}, {"N", SPLIT_N}, {"WS", SPLIT_WS}, {"UP", SPLIT_UP}, {"LO", SPLIT_LO}};
    for (size_t k = 0; k < sizeof(bits) / sizeof(bits[0]); k++)
        if (PyModule_AddIntConstant(module, bits[k].name, bits[k].bit) < 0) return -1;
    return 0;
}

static PyModuleDef_Slot split_slots[] = {
    {Py_mod_exec, split_exec},
    {0, NULL},
};

static struct PyModuleDef split_module = {
    PyModuleDef_HEAD_INIT, "polytok._kernels.split",
    "Compiled scanners for the split patterns of the well-known tokenizers (see polytok.regex.scanners).",
    0, split_methods, split_slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_split(void) { return PyModuleDef_Init(&split_module); }

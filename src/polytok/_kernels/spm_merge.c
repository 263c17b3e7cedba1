/* polytok._kernels.spm_merge: the per-word merge of `polytok.models.spm.SPM`, compiled.
 *
 * The score-ordered BPE of sentencepiece's BPE model (sentencepiece 0.2.3, src/bpe_model.cc,
 * Model::SampleEncode without dropout) and of llama.cpp's SPM session (llama-cpp-python
 * 0.3.36, vendor/llama.cpp/src/llama-vocab.cpp, llm_tokenizer_spm_session::tokenize), as
 * the pure-Python `SPM._merge` / `_merge_short` / `_llama_tokens` / `_emit_all` state them:
 * symbols start as the characters of the word (sentencepiece: the user-defined pieces cut
 * first and frozen, `SPM._cut_symbols`); every adjacent pair whose text has a merge score is
 * queued; the queue pops the highest score, ties to the leftmost pair; a popped pair whose
 * symbols changed since it was queued is skipped; a merge queues the two new neighbour pairs.
 * Then each surviving symbol gives its id, or the unknown rule of the model's mode.
 *
 * The piece table is built once per model (`Merger`): an open-addressing hash of the pieces
 * as code point strings, each with its output id, its merge score (if it merges) and its
 * sentencepiece UNUSED flag. The per-call scratch (code points, links, queue) belongs to the
 * call, so one Merger serves several threads; long words merge without the GIL. A sentencepiece
 * `.model` read in C (polytok._kernels.spm_model) gives its table without a Python object per
 * piece (`Merger.from_vocab`, from the reader's piece records).
 *
 * A word the kernel does not cover returns None from `ids`, and `tokenize` / `tokenize_all`
 * call the pure-Python fallback for it: a surviving UNUSED piece (sentencepiece resegments it
 * through the pairs it was queued from), a byte the vocabulary has no piece for (the pure
 * path raises its error), a word of 2**28 characters or more.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_api.h"
#include "kernel_util.h"

enum { MODE_SPELL = 0, MODE_UNK = 1, MODE_BYTE_FALLBACK = 2 };

#define MAX_WORD ((Py_ssize_t)1 << 28) /* characters; longer words take the pure path */
#define STACK_CHARS 96                  /* words up to this long use stack scratch */
#define RELEASE_GIL_FROM 2048           /* characters */

/* ---- the piece table ---------------------------------------------------------------- */

typedef struct {
    double score;
    int32_t rank;    /* of the score among the distinct scores, highest first; -1: does not merge */
    int32_t len;
    int32_t out_id;  /* -1: not an output */
    uint32_t key[2]; /* the code points of a piece of at most 2, else key[0]: its offset in the pool */
    uint8_t has_score;
    uint8_t unused;
} Entry;

typedef struct {
    uint32_t hash; /* the high half of the key's hash */
    int32_t index; /* into entries, -1: empty */
} Slot;

typedef struct {
    Entry *entries;
    Py_ssize_t count;
    Py_ssize_t capacity;
    Slot *slots;
    size_t mask;
    Py_UCS4 *pool;
    Py_ssize_t pool_len;
    Py_ssize_t pool_cap;
    Py_ssize_t max_len;
} Table;

/* FNV-1a over the code points, then a 64-bit avalanche (the MurmurHash3 finaliser's
 * constants), so both the slot (low bits) and the check (high bits) are well mixed. */
static inline uint64_t
hash_cps(const Py_UCS4 *cps, Py_ssize_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (Py_ssize_t i = 0; i < len; i++) {
        h ^= (uint64_t)cps[i];
        h *= 0x100000001b3ULL;
    }
    return mix64(h);
}

static void
table_free(Table *t)
{
    PyMem_Free(t->entries);
    PyMem_Free(t->slots);
    PyMem_Free(t->pool);
    memset(t, 0, sizeof(*t));
}

/* Room for `expected` entries; slots a power of two at least twice that. */
static int
table_init(Table *t, Py_ssize_t expected)
{
    memset(t, 0, sizeof(*t));
    if (expected < 1)
        expected = 1;
    if (expected > (Py_ssize_t)1 << 29) {
        PyErr_SetString(PyExc_OverflowError, "spm_merge: too many pieces");
        return -1;
    }
    size_t nslots = 8;
    while (nslots < (size_t)expected * 2)
        nslots <<= 1;
    t->entries = PyMem_Malloc((size_t)expected * sizeof(Entry));
    t->slots = PyMem_Malloc(nslots * sizeof(Slot));
    t->pool_cap = 1024;
    t->pool = PyMem_Malloc((size_t)t->pool_cap * sizeof(Py_UCS4));
    if (t->entries == NULL || t->slots == NULL || t->pool == NULL) {
        table_free(t);
        PyErr_NoMemory();
        return -1;
    }
    memset(t->slots, 0xFF, nslots * sizeof(Slot)); /* every index -1: empty (an empty slot's hash is never read) */
    t->mask = nslots - 1;
    t->capacity = expected;
    return 0;
}

static inline int
key_equal(const Table *t, const Entry *e, const Py_UCS4 *cps, Py_ssize_t len)
{
    if (e->len != len)
        return 0;
    if (len <= 2)
        return (len < 1 || e->key[0] == cps[0]) && (len < 2 || e->key[1] == cps[1]);
    const Py_UCS4 *key = t->pool + e->key[0];
    for (Py_ssize_t i = 0; i < len; i++) {
        if (key[i] != cps[i])
            return 0;
    }
    return 1;
}

static const Entry *
table_find(const Table *t, const Py_UCS4 *cps, Py_ssize_t len)
{
    if (t->count == 0 || len > t->max_len)
        return NULL;
    uint64_t h = hash_cps(cps, len);
    uint32_t high = (uint32_t)(h >> 32);
    size_t slot = (size_t)h & t->mask;
    for (;;) {
        const Slot *s = &t->slots[slot];
        if (s->index < 0)
            return NULL;
        if (s->hash == high) {
            const Entry *e = &t->entries[s->index];
            if (key_equal(t, e, cps, len))
                return e;
        }
        slot = (slot + 1) & t->mask;
    }
}

/* Room in the pool for `len` more code points; -1 with an exception set on failure. */
static int
pool_reserve(Table *t, Py_ssize_t len)
{
    if (len > MAX_WORD || (size_t)t->pool_len + (size_t)len > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "spm_merge: the pieces are too long");
        return -1;
    }
    if (t->pool_len + len > t->pool_cap) {
        size_t cap = (size_t)t->pool_cap;
        while (cap < (size_t)(t->pool_len + len))
            cap *= 2;
        if (cap > (size_t)PY_SSIZE_T_MAX / sizeof(Py_UCS4)) {
            PyErr_NoMemory();
            return -1;
        }
        Py_UCS4 *grown = PyMem_Realloc(t->pool, (size_t)cap * sizeof(Py_UCS4));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->pool = grown;
        t->pool_cap = (Py_ssize_t)cap;
    }
    return 0;
}

/* The entry of the `len` code points just written at the pool's end (reserved), added if new:
 * they stay in the pool only if the piece is new and longer than 2. NULL with an exception set. */
static Entry *
table_insert(Table *t, Py_ssize_t len)
{
    Py_UCS4 *cps = t->pool + t->pool_len;
    uint64_t h = hash_cps(cps, len);
    uint32_t high = (uint32_t)(h >> 32);
    size_t slot = (size_t)h & t->mask;
    for (;;) {
        Slot *s = &t->slots[slot];
        if (s->index < 0)
            break;
        if (s->hash == high && key_equal(t, &t->entries[s->index], cps, len))
            return &t->entries[s->index];
        slot = (slot + 1) & t->mask;
    }
    if (t->count >= t->capacity) {
        PyErr_SetString(PyExc_RuntimeError, "spm_merge: piece table full");
        return NULL;
    }
    Entry *e = &t->entries[t->count];
    e->len = (int32_t)len;
    e->key[0] = len >= 1 ? cps[0] : 0;
    e->key[1] = len >= 2 ? cps[1] : 0;
    if (len > 2) {
        e->key[0] = (uint32_t)t->pool_len;
        t->pool_len += len;
    }
    e->score = 0.0;
    e->rank = -1;
    e->out_id = -1;
    e->has_score = 0;
    e->unused = 0;
    t->slots[slot].hash = high;
    t->slots[slot].index = (int32_t)t->count;
    t->count++;
    if (len > t->max_len)
        t->max_len = len;
    return e;
}

/* The entry of `key` (a str), added if new. NULL with an exception set on failure. */
static Entry *
table_add(Table *t, PyObject *key)
{
    if (!PyUnicode_Check(key)) {
        PyErr_SetString(PyExc_TypeError, "spm_merge: pieces must be str");
        return NULL;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(key);
    if (pool_reserve(t, len) < 0)
        return NULL;
    Py_UCS4 *cps = t->pool + t->pool_len;
    int kind = PyUnicode_KIND(key);
    const void *data = PyUnicode_DATA(key);
    for (Py_ssize_t i = 0; i < len; i++)
        cps[i] = PyUnicode_READ(kind, data, i);
    return table_insert(t, len);
}

/* The code points of the UTF-8 s[0:size] into out (room for size); their count, or -1 when it is
 * not valid UTF-8 (spm_model checked it; a caller's bytes are not trusted). */
static Py_ssize_t
decode_utf8(const unsigned char *s, Py_ssize_t size, Py_UCS4 *out)
{
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < size;) {
        unsigned char c = s[i];
        if (c < 0x80) {
            out[n++] = c;
            i++;
            continue;
        }
        int more = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : -1;
        if (more < 0 || size - i <= more)
            return -1;
        Py_UCS4 cp = more == 0 ? c : more == 1 ? (Py_UCS4)(c & 0x1F) : more == 2 ? (Py_UCS4)(c & 0x0F) : (Py_UCS4)(c & 0x07);
        for (int k = 1; k <= more; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return -1;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if (cp > 0x10FFFF)
            return -1;
        out[n++] = cp;
        i += more + 1;
    }
    return n;
}

/* ---- the Merger object ------------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    Table pieces;
    Table symbols;       /* sentencepiece's user-defined pieces (whole symbols) */
    Py_UCS4 *starts;     /* sorted first characters of the symbols */
    Py_ssize_t n_starts;
    int32_t byte_ids[256]; /* -1: no piece for the byte */
    int mode;
    int32_t unk_id;
    Py_ssize_t cache_limit;
    Py_ssize_t cache_chars;
} Merger;

static void
Merger_dealloc(Merger *self)
{
    table_free(&self->pieces);
    table_free(&self->symbols);
    PyMem_Free(self->starts);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
as_int32(PyObject *value, int32_t *out, const char *what)
{
    long v = PyLong_AsLong(value);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "spm_merge: %s out of range", what);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* Each merging entry's rank among the distinct scores, highest first: the queue then orders
 * by (rank, left) in one integer. Equal scores (0.0 and -0.0 among them) share a rank, so a rank
 * depends only on the score, never on the entries' order. The entries are walked in score order:
 * as they are when their scores never rise; when a few break that order (sentencepiece files
 * score some pieces -1e9 among descending ones), those few are set aside, sorted and merged back;
 * else all are sorted, by an LSD radix sort of the scores' bit patterns (n log n comparisons
 * through qsort took most of a large vocabulary's build). */
typedef struct {
    uint64_t key; /* orders as the score descending: -0.0 right after 0.0 */
    Py_ssize_t entry;
} Ranked;

static inline uint64_t
descending_key(double score)
{
    uint64_t bits;
    memcpy(&bits, &score, sizeof bits);
    bits = (bits >> 63) ? ~bits : bits | ((uint64_t)1 << 63); /* ascending as the doubles (no NaN here) */
    return ~bits;
}

/* Sorts order[0:n] by key, with tmp (n) as scratch; a byte that every key shares is skipped. */
static void
radix_sort(Ranked *order, Ranked *tmp, Py_ssize_t n)
{
    for (int shift = 0; shift < 64; shift += 8) {
        Py_ssize_t count[257] = {0};
        for (Py_ssize_t i = 0; i < n; i++)
            count[((order[i].key >> shift) & 0xFF) + 1]++;
        if (count[((order[0].key >> shift) & 0xFF) + 1] == n)
            continue;
        for (int d = 0; d < 256; d++)
            count[d + 1] += count[d];
        for (Py_ssize_t i = 0; i < n; i++)
            tmp[count[(order[i].key >> shift) & 0xFF]++] = order[i];
        memcpy(order, tmp, (size_t)n * sizeof(Ranked));
    }
}

/* Sorts order[0:n] by key, in place, for the few set aside (insertion sort below 32). */
static void
sort_few(Ranked *order, Ranked *tmp, Py_ssize_t n)
{
    if (n >= 32) {
        radix_sort(order, tmp, n);
        return;
    }
    for (Py_ssize_t i = 1; i < n; i++) {
        Ranked r = order[i];
        Py_ssize_t j = i;
        for (; j > 0 && order[j - 1].key > r.key; j--)
            order[j] = order[j - 1];
        order[j] = r;
    }
}

/* Ranks `entry`, the next scored entry in score order: the rank rises when its score differs
 * from the one before (`last`). */
static inline void
give_rank(Table *t, Py_ssize_t entry, int32_t *rank, Py_ssize_t *last)
{
    if (*last >= 0 && t->entries[entry].score != t->entries[*last].score)
        (*rank)++;
    t->entries[entry].rank = *rank;
    *last = entry;
}

static int
rank_scores(Table *t)
{
    Py_ssize_t n = 0, last = -1;
    int sorted = 1;
    for (Py_ssize_t i = 0; i < t->count; i++) {
        if (!t->entries[i].has_score)
            continue;
        if (last >= 0 && t->entries[i].score > t->entries[last].score)
            sorted = 0;
        last = i;
        n++;
    }
    if (n == 0)
        return 0;
    int32_t rank = 0;
    last = -1;
    if (sorted) { /* ranks in entry order, no scratch */
        for (Py_ssize_t i = 0; i < t->count; i++) {
            if (t->entries[i].has_score)
                give_rank(t, i, &rank, &last);
        }
        return 0;
    }
    /* the run: scored entries in entry order whose scores never rise; an entry scoring above the
     * run's last pops it (and any other below it) into the few set aside, at most n / 16 + 16 of
     * them, else all are sorted */
    Py_ssize_t few_limit = n / 16 + 16;
    Py_ssize_t *run = PyMem_Malloc((size_t)n * sizeof(Py_ssize_t)); /* n <= 2**29: no overflow */
    Ranked *few = PyMem_Malloc((size_t)few_limit * 2 * sizeof(Ranked));
    Ranked *order = NULL;
    if (run == NULL || few == NULL)
        goto nomem;
    Py_ssize_t m = 0, k = 0;
    for (Py_ssize_t i = 0; i < t->count && k <= few_limit; i++) {
        if (!t->entries[i].has_score)
            continue;
        double score = t->entries[i].score;
        while (m > 0 && t->entries[run[m - 1]].score < score && k <= few_limit) {
            m--;
            if (k < few_limit) {
                few[k].key = descending_key(t->entries[run[m]].score);
                few[k].entry = run[m];
            }
            k++;
        }
        run[m++] = i;
    }
    if (k <= few_limit) {
        sort_few(few, few + k, k);
        Py_ssize_t a = 0;
        for (Py_ssize_t b = 0; b < k; b++) {
            double score = t->entries[few[b].entry].score;
            while (a < m && t->entries[run[a]].score >= score)
                give_rank(t, run[a++], &rank, &last);
            give_rank(t, few[b].entry, &rank, &last);
        }
        while (a < m)
            give_rank(t, run[a++], &rank, &last);
        PyMem_Free(run);
        PyMem_Free(few);
        return 0;
    }
    PyMem_Free(run);
    PyMem_Free(few);
    run = NULL;
    few = NULL;
    order = PyMem_Malloc((size_t)n * 2 * sizeof(Ranked));
    if (order == NULL)
        goto nomem;
    k = 0;
    for (Py_ssize_t i = 0; i < t->count; i++) {
        if (!t->entries[i].has_score)
            continue;
        order[k].key = descending_key(t->entries[i].score);
        order[k].entry = i;
        k++;
    }
    radix_sort(order, order + n, n);
    for (Py_ssize_t i = 0; i < n; i++)
        give_rank(t, order[i].entry, &rank, &last);
    PyMem_Free(order);
    return 0;
nomem:
    PyMem_Free(run);
    PyMem_Free(few);
    PyErr_NoMemory();
    return -1;
}

static int
cmp_ucs4(const void *a, const void *b)
{
    Py_UCS4 x = *(const Py_UCS4 *)a, y = *(const Py_UCS4 *)b;
    return (x > y) - (x < y);
}

/* The whole symbols, byte ids and options of a Merger whose pieces are in (Merger_init, from_vocab). */
static int
init_rest(Merger *self, PyObject *symbols, PyObject *byte_ids, int mode, int unk_id, Py_ssize_t cache_limit,
          Py_ssize_t cache_chars)
{
    PyObject *it, *item;
    /* whole symbols */
    Py_ssize_t n_symbols = PyObject_Length(symbols);
    if (n_symbols < 0)
        return -1;
    if (table_init(&self->symbols, n_symbols) < 0)
        return -1;
    if ((size_t)n_symbols > PY_SSIZE_T_MAX / sizeof(Py_UCS4) - 1) {
        PyErr_NoMemory();
        return -1;
    }
    self->starts = PyMem_Malloc(((size_t)n_symbols + 1) * sizeof(Py_UCS4));
    if (self->starts == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    it = PyObject_GetIter(symbols);
    if (it == NULL)
        return -1;
    while ((item = PyIter_Next(it)) != NULL) {
        if (PyUnicode_Check(item) && PyUnicode_GET_LENGTH(item) > 0 && self->symbols.count < n_symbols) {
            Py_ssize_t before = self->symbols.count;
            if (table_add(&self->symbols, item) == NULL) {
                Py_DECREF(item);
                Py_DECREF(it);
                return -1;
            }
            if (self->symbols.count > before)
                self->starts[self->n_starts++] = PyUnicode_READ_CHAR(item, 0);
        }
        else if (!PyUnicode_Check(item)) {
            Py_DECREF(item);
            Py_DECREF(it);
            PyErr_SetString(PyExc_TypeError, "spm_merge: symbols must be str");
            return -1;
        }
        Py_DECREF(item);
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return -1;
    qsort(self->starts, (size_t)self->n_starts, sizeof(Py_UCS4), cmp_ucs4);
    /* byte ids */
    PyObject *seq = PySequence_Fast(byte_ids, "spm_merge: byte_ids must be a sequence");
    if (seq == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(seq) != 256) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "spm_merge: byte_ids must have 256 entries");
        return -1;
    }
    for (int b = 0; b < 256; b++) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, b);
        self->byte_ids[b] = -1;
        if (v != Py_None && (as_int32(v, &self->byte_ids[b], "byte id") < 0 || self->byte_ids[b] < 0)) {
            Py_DECREF(seq);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "spm_merge: negative byte id");
            return -1;
        }
    }
    Py_DECREF(seq);
    self->mode = mode;
    self->unk_id = (int32_t)unk_id;
    self->cache_limit = cache_limit;
    self->cache_chars = cache_chars;
    return 0;
}

/* Merger(outputs: dict[str, int], scores: dict[str, float], unused: set[str], symbols: set[str],
 *        byte_ids: list[int | None] (256), mode: int, unk_id: int, cache_limit: int, cache_chars: int)
 * Raises ValueError for a NaN score (the pure path's queue order is the reference there). */
static int
Merger_init(Merger *self, PyObject *args, PyObject *kwds)
{
    PyObject *outputs, *scores, *unused, *symbols, *byte_ids;
    int mode;
    int unk_id;
    Py_ssize_t cache_limit, cache_chars;
    if (!PyArg_ParseTuple(args, "O!O!OOOiinn:Merger", &PyDict_Type, &outputs, &PyDict_Type, &scores, &unused,
                          &symbols, &byte_ids, &mode, &unk_id, &cache_limit, &cache_chars))
        return -1;
    if (mode < MODE_SPELL || mode > MODE_BYTE_FALLBACK) {
        PyErr_SetString(PyExc_ValueError, "spm_merge: bad mode");
        return -1;
    }
    if (self->pieces.entries != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "spm_merge: Merger already initialised");
        return -1;
    }
    Py_ssize_t expected = PyDict_GET_SIZE(outputs) + PyDict_GET_SIZE(scores);
    if (table_init(&self->pieces, expected) < 0)
        return -1;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(outputs, &pos, &key, &value)) {
        Entry *e = table_add(&self->pieces, key);
        if (e == NULL || as_int32(value, &e->out_id, "id") < 0)
            return -1;
        if (e->out_id < 0) {
            PyErr_SetString(PyExc_ValueError, "spm_merge: negative id");
            return -1;
        }
    }
    pos = 0;
    while (PyDict_Next(scores, &pos, &key, &value)) {
        double score = PyFloat_AsDouble(value);
        if (score == -1.0 && PyErr_Occurred())
            return -1;
        if (isnan(score)) {
            PyErr_SetString(PyExc_ValueError, "spm_merge: a NaN score");
            return -1;
        }
        Entry *e = table_add(&self->pieces, key);
        if (e == NULL)
            return -1;
        e->score = score;
        e->has_score = 1;
    }
    if (rank_scores(&self->pieces) < 0)
        return -1;
    /* UNUSED flags (only pieces already in the table matter) */
    PyObject *it = PyObject_GetIter(unused);
    if (it == NULL)
        return -1;
    PyObject *item;
    while ((item = PyIter_Next(it)) != NULL) {
        if (!PyUnicode_Check(item)) {
            Py_DECREF(item);
            Py_DECREF(it);
            PyErr_SetString(PyExc_TypeError, "spm_merge: unused pieces must be str");
            return -1;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(item);
        Py_UCS4 *buf = PyUnicode_AsUCS4Copy(item);
        Py_DECREF(item);
        if (buf == NULL) {
            Py_DECREF(it);
            return -1;
        }
        Entry *e = (Entry *)table_find(&self->pieces, buf, len);
        PyMem_Free(buf);
        if (e != NULL)
            e->unused = 1;
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return -1;
    return init_rest(self, symbols, byte_ids, mode, unk_id, cache_limit, cache_chars);
}

/* One piece record of polytok._kernels.spm_model (`Vocab.records`, spm_model.c's Record). */
typedef struct {
    uint32_t start, len; /* of the piece's UTF-8 text in the file's bytes */
    float score;
    uint32_t type; /* 1..6: NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE */
} SpmRecord;

enum { PIECE_NORMAL = 1, PIECE_USER_DEFINED = 4, PIECE_UNUSED = 5 };

/* The piece table of sentencepiece's rules straight from a Vocab's records (what `SPM` passes
 * as `_outputs` and `_merge_score` for a .model whose pieces are all distinct): NORMAL,
 * USER_DEFINED and UNUSED pieces are outputs and merge with their score (-0.0 as the tiniest
 * negative double, as `_sentencepiece_build._bpe` passes it), UNUSED ones flagged. */
static int
pieces_from_records(Merger *self, const unsigned char *data, Py_ssize_t size, const SpmRecord *records,
                    Py_ssize_t n)
{
    Py_ssize_t expected = 0, total = 0; /* entries, and bytes: room for their code points */
    for (Py_ssize_t i = 0; i < n; i++) {
        uint32_t type = records[i].type;
        if (type == PIECE_NORMAL || type == PIECE_USER_DEFINED || type == PIECE_UNUSED) {
            expected++;
            total += records[i].len < MAX_WORD ? records[i].len : MAX_WORD;
        }
    }
    if (total > MAX_WORD)
        total = MAX_WORD; /* pool_reserve grows it further when needed */
    if (table_init(&self->pieces, expected) < 0 || pool_reserve(&self->pieces, total) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        const SpmRecord *r = &records[i];
        if (r->type != PIECE_NORMAL && r->type != PIECE_USER_DEFINED && r->type != PIECE_UNUSED)
            continue;
        if ((Py_ssize_t)r->start > size || (Py_ssize_t)r->len > size - (Py_ssize_t)r->start) {
            PyErr_SetString(PyExc_ValueError, "spm_merge: a piece record points past the data");
            return -1;
        }
        double score = (double)r->score;
        if (isnan(score)) {
            PyErr_SetString(PyExc_ValueError, "spm_merge: a NaN score");
            return -1;
        }
        if (score == 0.0 && signbit(score))
            score = -5e-324;
        if (pool_reserve(&self->pieces, r->len) < 0)
            return -1;
        Py_ssize_t len = decode_utf8(data + r->start, r->len, self->pieces.pool + self->pieces.pool_len);
        if (len < 0) {
            PyErr_SetString(PyExc_ValueError, "spm_merge: a piece is not UTF-8");
            return -1;
        }
        Py_ssize_t before = self->pieces.count;
        Entry *e = table_insert(&self->pieces, len);
        if (e == NULL)
            return -1;
        if (self->pieces.count == before) {
            PyErr_SetString(PyExc_ValueError, "spm_merge: a piece is listed twice");
            return -1;
        }
        e->out_id = (int32_t)i;
        e->score = score;
        e->has_score = 1;
        e->unused = r->type == PIECE_UNUSED;
    }
    return rank_scores(&self->pieces);
}

/* Merger.from_vocab(data: bytes, records: bytes, symbols, byte_ids, mode, unk_id, cache_limit, cache_chars)
 * The Merger of a sentencepiece .model read by spm_model (`Vocab.data`, `Vocab.records`); the
 * other arguments as Merger's. ValueError: a NaN score, a piece listed twice, a bad record. */
static PyObject *
Merger_from_vocab(PyTypeObject *type, PyObject *args)
{
    Py_buffer data, records;
    PyObject *symbols, *byte_ids;
    int mode, unk_id;
    Py_ssize_t cache_limit, cache_chars;
    if (!PyArg_ParseTuple(args, "y*y*OOiinn:from_vocab", &data, &records, &symbols, &byte_ids, &mode, &unk_id,
                          &cache_limit, &cache_chars))
        return NULL;
    Merger *self = NULL;
    if (mode != MODE_UNK && mode != MODE_BYTE_FALLBACK) {
        PyErr_SetString(PyExc_ValueError, "spm_merge: from_vocab takes sentencepiece's modes");
        goto fail;
    }
    if (records.len % (Py_ssize_t)sizeof(SpmRecord) != 0 || records.len / (Py_ssize_t)sizeof(SpmRecord) > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "spm_merge: records must be whole piece records");
        goto fail;
    }
    self = (Merger *)type->tp_alloc(type, 0);
    if (self == NULL)
        goto fail;
    Py_ssize_t n = records.len / (Py_ssize_t)sizeof(SpmRecord);
    /* the records in place when aligned for them (a bytes object's data is), else an aligned copy */
    SpmRecord *copy = NULL;
    if ((uintptr_t)records.buf % _Alignof(SpmRecord) != 0) {
        copy = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(SpmRecord));
        if (copy == NULL) {
            PyErr_NoMemory();
            goto fail;
        }
        memcpy(copy, records.buf, (size_t)records.len);
    }
    int status = pieces_from_records(self, data.buf, data.len, copy ? copy : (const SpmRecord *)records.buf, n);
    PyMem_Free(copy);
    if (status < 0 || init_rest(self, symbols, byte_ids, mode, unk_id, cache_limit, cache_chars) < 0)
        goto fail;
    PyBuffer_Release(&data);
    PyBuffer_Release(&records);
    return (PyObject *)self;
fail:
    Py_XDECREF(self);
    PyBuffer_Release(&data);
    PyBuffer_Release(&records);
    return NULL;
}

/* ---- the merge -------------------------------------------------------------------- */

typedef struct {
    uint64_t order; /* rank << 32 | left: the lowest pops first (highest score, then leftmost) */
    int32_t right, joint;
    int32_t entry; /* the merged piece's entry */
} Pair;

/* Does `a` pop before `b`? Highest score first, then the leftmost. */
static inline int
pair_before(const Pair *a, const Pair *b)
{
    return a->order < b->order;
}

static inline void
heap_push(Pair *heap, Py_ssize_t *size, Pair p)
{
    Py_ssize_t i = (*size)++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) / 2;
        if (!pair_before(&p, &heap[parent]))
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = p;
}

static inline Pair
heap_pop(Pair *heap, Py_ssize_t *size)
{
    Pair top = heap[0];
    Pair last = heap[--(*size)];
    Py_ssize_t n = *size, i = 0;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && pair_before(&heap[child + 1], &heap[child]))
            child++;
        if (!pair_before(&heap[child], &last))
            break;
        heap[i] = heap[child];
        i = child;
    }
    if (n > 0)
        heap[i] = last;
    return top;
}

typedef struct {
    const Merger *m;
    const Py_UCS4 *cps;
    int32_t *length; /* symbol length at its start, 0 inside or merged away */
    int32_t *nxt, *prev;
    int32_t *entry;  /* a merged symbol's entry, -1: look it up */
    uint8_t *fixed;  /* frozen whole symbol */
    Pair *heap;
    Py_ssize_t heap_size;
} Work;

static inline void
offer(Work *w, int32_t left, int32_t right)
{
    if (right < 0 || w->fixed[left] || w->fixed[right])
        return;
    int32_t joint = (right - left) + w->length[right];
    const Entry *e = table_find(&w->m->pieces, w->cps + left, joint);
    if (e != NULL && e->rank >= 0) {
        Pair p = {((uint64_t)(uint32_t)e->rank << 32) | (uint32_t)left, right, joint,
                  (int32_t)(e - w->m->pieces.entries)};
        heap_push(w->heap, &w->heap_size, p);
    }
}

static inline int
is_start(const Merger *m, Py_UCS4 ch)
{
    Py_ssize_t lo = 0, hi = m->n_starts;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (m->starts[mid] < ch)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->n_starts && m->starts[lo] == ch;
}

/* The initial symbols: one per character, or sentencepiece's cut of the whole symbols
 * (`SPM._cut_symbols`: the longest symbol at each position, else one character). */
static void
initial_symbols(Work *w, int32_t n)
{
    const Merger *m = w->m;
    int any = 0;
    if (m->n_starts > 0) {
        for (int32_t i = 0; i < n; i++) {
            if (is_start(m, w->cps[i])) {
                any = 1;
                break;
            }
        }
    }
    int32_t last = -1;
    int32_t at = 0;
    while (at < n) {
        int32_t match = 0;
        if (any && is_start(m, w->cps[at])) {
            int32_t most = n - at;
            if (most > m->symbols.max_len)
                most = (int32_t)m->symbols.max_len;
            for (int32_t k = most; k >= 1; k--) {
                if (table_find(&m->symbols, w->cps + at, k) != NULL) {
                    match = k;
                    break;
                }
            }
        }
        int32_t len = match ? match : 1;
        w->length[at] = len;
        w->entry[at] = -1;
        w->fixed[at] = match > 0;
        for (int32_t k = 1; k < len; k++) {
            w->length[at + k] = 0;
            w->fixed[at + k] = 0;
        }
        w->prev[at] = last;
        w->nxt[at] = -1;
        if (last >= 0)
            w->nxt[last] = at;
        last = at;
        at += len;
    }
}

/* Appends the UTF-8 bytes' ids of cps[start:end]; 0, or 1 when a byte has no id. */
static int
spell(const Merger *m, const Py_UCS4 *cps, int32_t start, int32_t end, int32_t *out, Py_ssize_t *count)
{
    for (int32_t i = start; i < end; i++) {
        Py_UCS4 c = cps[i];
        uint8_t bytes[4];
        int nb;
        if (c < 0x80) {
            bytes[0] = (uint8_t)c;
            nb = 1;
        }
        else if (c < 0x800) {
            bytes[0] = (uint8_t)(0xC0 | (c >> 6));
            bytes[1] = (uint8_t)(0x80 | (c & 0x3F));
            nb = 2;
        }
        else if (c < 0x10000) { /* surrogates too, as "surrogatepass" spells them */
            bytes[0] = (uint8_t)(0xE0 | (c >> 12));
            bytes[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            bytes[2] = (uint8_t)(0x80 | (c & 0x3F));
            nb = 3;
        }
        else {
            bytes[0] = (uint8_t)(0xF0 | ((c >> 18) & 0x07));
            bytes[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            bytes[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            bytes[3] = (uint8_t)(0x80 | (c & 0x3F));
            nb = 4;
        }
        for (int k = 0; k < nb; k++) {
            int32_t id = m->byte_ids[bytes[k]];
            if (id < 0)
                return 1;
            out[(*count)++] = id;
        }
    }
    return 0;
}

/* Merges cps[0:n] and writes the ids to out (room for 4n); 0 done, 1 the pure path must run. */
static int
merge_word(Work *w, int32_t n, int32_t *out, Py_ssize_t *count)
{
    const Merger *m = w->m;
    *count = 0;
    if (n == 0)
        return 0;
    initial_symbols(w, n);
    w->heap_size = 0;
    for (int32_t left = 0; left >= 0; left = w->nxt[left])
        offer(w, left, w->nxt[left]);
    while (w->heap_size > 0) {
        Pair p = heap_pop(w->heap, &w->heap_size);
        int32_t left = (int32_t)(p.order & 0xFFFFFFFFu), right = p.right;
        if (w->length[left] == 0 || w->length[right] == 0 || w->length[left] + w->length[right] != p.joint)
            continue;
        w->length[left] = p.joint;
        w->entry[left] = p.entry;
        w->length[right] = 0;
        int32_t after = w->nxt[right];
        w->nxt[left] = after;
        if (after >= 0)
            w->prev[after] = left;
        int32_t before = w->prev[left];
        if (before >= 0)
            offer(w, before, left);
        if (after >= 0)
            offer(w, left, after);
    }
    int32_t unk = m->unk_id;
    for (int32_t start = 0; start >= 0; start = w->nxt[start]) {
        int32_t end = start + w->length[start];
        const Entry *e = w->entry[start] >= 0 ? &m->pieces.entries[w->entry[start]]
                                              : table_find(&m->pieces, w->cps + start, end - start);
        if (e != NULL && e->out_id >= 0) {
            if (m->mode != MODE_SPELL && e->unused)
                return 1; /* sentencepiece resegments it: the pure path */
            if (m->mode == MODE_UNK && e->out_id == unk && *count > 0 && out[*count - 1] == unk)
                continue;
            out[(*count)++] = e->out_id;
            continue;
        }
        if (m->mode == MODE_UNK) {
            if (*count == 0 || out[*count - 1] != unk)
                out[(*count)++] = unk;
            continue;
        }
        if (spell(m, w->cps, start, end, out, count))
            return 1;
    }
    return 0;
}

/* Bytes of scratch for a word of n (< 2**28) characters: heap (3n pairs), cps (4n), length/nxt/prev/entry
 * (16n), out (4n ids), fixed (n). */
static size_t
scratch_bytes(size_t un)
{
    return un * sizeof(Pair) * 3 + un * sizeof(Py_UCS4) + un * sizeof(int32_t) * 8 + un;
}

/* Carves `block` (scratch_bytes(n)) into w's arrays; returns the code point array, sets *out. */
static Py_UCS4 *
carve_scratch(Work *w, char *p, size_t un, int32_t **out)
{
    w->heap = (Pair *)p;
    p += un * sizeof(Pair) * 3;
    Py_UCS4 *cps = (Py_UCS4 *)p;
    p += un * sizeof(Py_UCS4);
    w->length = (int32_t *)p;
    p += un * sizeof(int32_t);
    w->nxt = (int32_t *)p;
    p += un * sizeof(int32_t);
    w->prev = (int32_t *)p;
    p += un * sizeof(int32_t);
    w->entry = (int32_t *)p;
    p += un * sizeof(int32_t);
    *out = (int32_t *)p;
    p += un * sizeof(int32_t) * 4;
    w->fixed = (uint8_t *)p;
    return cps;
}

/* Stack scratch for words of up to STACK_CHARS characters. */
typedef struct {
    int32_t length[STACK_CHARS], nxt[STACK_CHARS], prev[STACK_CHARS], entry[STACK_CHARS];
    uint8_t fixed[STACK_CHARS];
    Pair heap[3 * STACK_CHARS];
} SmallScratch;

static void
use_small(Work *w, SmallScratch *s)
{
    w->length = s->length;
    w->nxt = s->nxt;
    w->prev = s->prev;
    w->entry = s->entry;
    w->fixed = s->fixed;
    w->heap = s->heap;
}

/* The ids of `word` as a new list, or Py_None (new reference) where the pure path must run. */
static PyObject *
word_ids(Merger *m, PyObject *word)
{
    if (!PyUnicode_Check(word)) {
        PyErr_SetString(PyExc_TypeError, "spm_merge: a word must be str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n >= MAX_WORD)
        Py_RETURN_NONE;
    SmallScratch small;
    Py_UCS4 s_cps[STACK_CHARS];
    int32_t s_out[4 * STACK_CHARS];
    void *block = NULL;
    Work w;
    int32_t *out;
    Py_UCS4 *cps;
    w.m = m;
    if (n <= STACK_CHARS) {
        use_small(&w, &small);
        out = s_out;
        cps = s_cps;
    }
    else {
        size_t un = (size_t)n; /* n < 2**28: no size below overflows */
        block = PyMem_Malloc(scratch_bytes(un));
        if (block == NULL)
            return PyErr_NoMemory();
        cps = carve_scratch(&w, block, un, &out);
    }
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    for (Py_ssize_t i = 0; i < n; i++)
        cps[i] = PyUnicode_READ(kind, data, i);
    w.cps = cps;
    Py_ssize_t count = 0;
    int status;
    if (n >= RELEASE_GIL_FROM) {
        Py_BEGIN_ALLOW_THREADS
        status = merge_word(&w, (int32_t)n, out, &count);
        Py_END_ALLOW_THREADS
    }
    else {
        status = merge_word(&w, (int32_t)n, out, &count);
    }
    PyObject *result;
    if (status != 0) {
        result = Py_None;
        Py_INCREF(result);
    }
    else {
        result = PyList_New(count);
        if (result != NULL) {
            for (Py_ssize_t i = 0; i < count; i++) {
                PyObject *id = PyLong_FromLong(out[i]);
                if (id == NULL) {
                    Py_CLEAR(result);
                    break;
                }
                PyList_SET_ITEM(result, i, id);
            }
        }
    }
    PyMem_Free(block);
    return result;
}

/* The capsule's `word_ids` (kernel_api.h): `word_ids` on code points, without the GIL. */
static int
api_word_ids(PyObject *merger, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count)
{
    *count = 0;
    if (n >= MAX_WORD)
        return 1;
    SmallScratch small;
    void *block = NULL;
    Work w;
    int32_t *unused_out;
    w.m = (const Merger *)merger;
    w.cps = cps;
    if (n <= STACK_CHARS) {
        use_small(&w, &small);
    }
    else {
        size_t un = (size_t)n;
        block = PyMem_RawMalloc(scratch_bytes(un));
        if (block == NULL)
            return -1;
        carve_scratch(&w, block, un, &unused_out);
    }
    int status = merge_word(&w, (int32_t)n, out, count);
    PyMem_RawFree(block);
    return status;
}

/* The cached ids of `word` (a borrowed reference to the cache's list, or a new one in *owned),
 * computing, falling back and remembering as `WordCache.ids` does. NULL on error. */
static PyObject *
cached_ids(Merger *m, PyObject *word, PyObject *cache, PyObject *fallback, PyObject **owned)
{
    *owned = NULL;
    PyObject *found = PyDict_GetItemWithError(cache, word);
    if (found != NULL)
        return found;
    if (PyErr_Occurred())
        return NULL;
    PyObject *ids = word_ids(m, word);
    if (ids == NULL)
        return NULL;
    if (ids == Py_None) {
        Py_DECREF(ids);
        ids = PyObject_CallOneArg(fallback, word);
        if (ids == NULL)
            return NULL;
        if (!PyList_Check(ids)) {
            Py_DECREF(ids);
            PyErr_SetString(PyExc_TypeError, "spm_merge: the fallback must return a list");
            return NULL;
        }
    }
    if (PyUnicode_GET_LENGTH(word) < m->cache_chars) {
        if (PyDict_GET_SIZE(cache) >= m->cache_limit)
            PyDict_Clear(cache);
        if (PyDict_SetItem(cache, word, ids) < 0) {
            Py_DECREF(ids);
            return NULL;
        }
    }
    *owned = ids;
    return ids;
}

static PyObject *
Merger_ids(Merger *self, PyObject *word)
{
    return word_ids(self, word);
}

static int
check_cache(PyObject *cache)
{
    if (!PyDict_Check(cache)) {
        PyErr_SetString(PyExc_TypeError, "spm_merge: the cache must be a dict");
        return -1;
    }
    return 0;
}

static PyObject *
Merger_tokenize(Merger *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "tokenize(word, cache, fallback)");
        return NULL;
    }
    if (check_cache(args[1]) < 0)
        return NULL;
    PyObject *owned;
    PyObject *ids = cached_ids(self, args[0], args[1], args[2], &owned);
    if (ids == NULL)
        return NULL;
    PyObject *copy = PyList_GetSlice(ids, 0, PyList_GET_SIZE(ids));
    Py_XDECREF(owned);
    return copy;
}

static PyObject *
Merger_tokenize_all(Merger *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "tokenize_all(words, cache, fallback)");
        return NULL;
    }
    if (check_cache(args[1]) < 0)
        return NULL;
    PyObject *words = PySequence_Fast(args[0], "spm_merge: words must be a sequence");
    if (words == NULL)
        return NULL;
    /* First the ids list of each word (held: filling the cache may clear it), then one copy. */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(words);
    PyObject *s_lists[64];
    PyObject **lists = s_lists;
    if (n > 64) {
        if ((size_t)n > PY_SSIZE_T_MAX / sizeof(PyObject *)) {
            Py_DECREF(words);
            return PyErr_NoMemory();
        }
        lists = PyMem_Malloc((size_t)n * sizeof(PyObject *));
        if (lists == NULL) {
            Py_DECREF(words);
            return PyErr_NoMemory();
        }
    }
    PyObject *out = NULL;
    Py_ssize_t held = 0, total = 0;
    for (; held < n; held++) {
        PyObject *word = PySequence_Fast_GET_ITEM(words, held);
        Py_INCREF(word); /* the fallback may run Python code */
        PyObject *owned;
        PyObject *ids = cached_ids(self, word, args[1], args[2], &owned);
        Py_DECREF(word);
        if (ids == NULL)
            goto done;
        if (owned == NULL)
            Py_INCREF(ids);
        lists[held] = ids;
        total += PyList_GET_SIZE(ids);
    }
    out = PyList_New(total);
    if (out == NULL)
        goto done;
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < held; i++) {
        PyObject *list = lists[i];
        Py_ssize_t size = PyList_GET_SIZE(list);
        for (Py_ssize_t k = 0; k < size && at < total; k++) {
            PyObject *id = PyList_GET_ITEM(list, k);
            Py_INCREF(id);
            PyList_SET_ITEM(out, at++, id);
        }
    }
    if (at != total) { /* a list changed size under us (a hostile fallback) */
        Py_CLEAR(out);
        PyErr_SetString(PyExc_RuntimeError, "spm_merge: a word's ids changed while tokenizing");
    }
done:
    for (Py_ssize_t i = 0; i < held; i++)
        Py_DECREF(lists[i]);
    if (lists != s_lists)
        PyMem_Free(lists);
    Py_DECREF(words);
    return out;
}

static PyMethodDef Merger_methods[] = {
    {"from_vocab", (PyCFunction)Merger_from_vocab, METH_VARARGS | METH_CLASS,
     "from_vocab(data, records, symbols, byte_ids, mode, unk_id, cache_limit, cache_chars) -> Merger: the table of a "
     "sentencepiece .model straight from spm_model's records."},
    {"ids", (PyCFunction)Merger_ids, METH_O,
     "ids(word) -> list[int] | None: the ids of one word, None where the pure path must run."},
    {"tokenize", (PyCFunction)(void (*)(void))Merger_tokenize, METH_FASTCALL,
     "tokenize(word, cache, fallback) -> list[int]: a fresh list of the word's ids, through the cache."},
    {"tokenize_all", (PyCFunction)(void (*)(void))Merger_tokenize_all, METH_FASTCALL,
     "tokenize_all(words, cache, fallback) -> list[int]: the ids of each word, concatenated."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MergerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.spm_merge.Merger",
    .tp_basicsize = sizeof(Merger),
    .tp_dealloc = (destructor)Merger_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The piece table of one SPM model and its per-word merge.",
    .tp_methods = Merger_methods,
    .tp_init = (initproc)Merger_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef spm_merge_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "polytok._kernels.spm_merge",
    .m_doc = "The score-ordered BPE merge of polytok.models.spm.SPM, compiled.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit_spm_merge(void)
{
    if (PyType_Ready(&MergerType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&spm_merge_module);
    if (module == NULL)
        return NULL;
    Py_INCREF(&MergerType);
    if (PyModule_AddObject(module, "Merger", (PyObject *)&MergerType) < 0) {
        Py_DECREF(&MergerType);
        Py_DECREF(module);
        return NULL;
    }
    static SpmMergeAPI api;
    api.type = &MergerType;
    api.word_ids = api_word_ids;
    PyObject *capsule = PyCapsule_New(&api, SPM_MERGE_API_NAME, NULL);
    if (capsule == NULL || PyModule_AddObjectRef(module, "_C_API", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(module);
        return NULL;
    }
    Py_DECREF(capsule);
    return module;
}

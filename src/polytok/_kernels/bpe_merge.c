/* The BPE model's word loop, compiled: polytok._kernels.bpe_merge.
 *
 * Semantics are those of polytok/models/bpe.py (`BPE.tokenize`, `BPE._cut`, `BPE._word_ids`)
 * and polytok/models/_bpe_word.py (`merge_scan`, `merge_heap`): HF tokenizers 0.23.3
 * tokenizers/src/models/bpe/word.rs (`Word::merge_all`) and, for merge_priority="token_id",
 * tiktoken 0.14.0 src/lib.rs (`_byte_pair_merge`). The algorithms are reproduced from those
 * files; no reference code is copied.
 *
 * A `Merger` holds one model's tables: the id of every one-character entry (an open-addressing
 * hash of code point -> id), and the rank of a pair of ids -- either a hash of (left, right) ->
 * rank with the id each rank makes (merge_priority="merges"; a pair listed twice keeps its last
 * rank, as the pure dict), or (merge_priority="token_id") the id of the concatenation of the two
 * pieces, found in a hash of every vocabulary string keyed by a polynomial hash that composes
 * (hash(a + b) = hash(a) * B^len(b) + hash(b)), each hit checked character by character.
 *
 * What it covers, and what it leaves to the pure loop (the caller's `fallback`, called with the
 * word): every non-empty word of a model without dropout or affixes, with the pure rules for a
 * character that is not a one-character entry (`BPE._symbols`: byte-fallback tokens, a pending
 * unk symbol flushed after them, fused unks, dropped characters; unknown_chars="block": a
 * symbol no merge takes, written as `write_blocked` does). A word the pure loop would fail on
 * (a lone surrogate to spell in bytes, an unk token missing from the vocabulary) goes to
 * `fallback`, which raises the pure loop's error; so does an empty word.
 *
 * The merge rules, exactly as the pure loops:
 * - `merge_heap` (HF): candidates ordered by (rank, left position); a popped candidate is
 *   dropped if its left symbol is gone, has no right neighbour, or the pair there now makes a
 *   different id than the one it was queued with.
 * - `merge_scan` (lowest rank, leftmost first) for words up to `scan_limit` symbols; the model
 *   passes 0 where the scan is not exact (then the heap runs for every word).
 * The pure model uses `merge_tree` for words over 4096 symbols where the scan is exact; it gives
 * the scan's result, which is the heap's result there, so the heap serves those words here.
 *
 * `tokenize_all(words, cache, fallback)` is `BPE.tokenize` of each word, concatenated: a word in
 * `cache` (the model's `WordCache`, a dict) is looked up; a new word is cut where no merge can
 * cross (`BPE._cut`: before each `mark` whose preceding character is a one-character entry not
 * in `unsafe`), each chunk looked up or merged and remembered, then the word is remembered
 * (words under `cached_chars` characters; the cache is cleared first when it holds `cache_size`).
 *
 * byte_level (merge_priority="token_id" only; polytok/models/_bpe_bytes.py): a word is text and
 * its UTF-8 bytes merge, as tiktoken 0.14.0 src/lib.rs `byte_pair_encode` merges a piece; the
 * vocabulary spells bytes in the GPT-2 byte alphabet. Every entry is keyed by the bytes it
 * spells: one and two bytes by direct index, 3 to 8 bytes packed in an integer (a table per
 * length, so the short ones a merge looks up most stay small), longer ones by their hash and
 * then byte for byte. A candidate pair is the bytes of two adjacent symbols, contiguous in the
 * word, so its rank is one lookup of that range; the scan (up to 64 bytes) and the heap give the
 * same result as the pure loops on the byte form. `tokenize_all` then keeps its own word cache,
 * keyed by the word's code units and kind (`WordCache`'s bounds), in place of the dict.
 *
 * The module's `_C_API` capsule (kernel_api.h, BpeMergeAPI) offers the merge of one word on code
 * points and the cut, without the GIL, to the batch kernel: a byte_level Merger's, and that of a
 * Merger over spelt words without blocked characters or ignore_merges; they read the tables only.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "kernel_api.h"
#include "kernel_util.h"

#define NONE_RANK INT32_MAX
#define STACK_SYMBOLS 64         /* words up to this long merge in stack arrays */
#define GIL_FREE_SYMBOLS 4096    /* words at least this long merge without the GIL */
#define HASH_BASE 0x100000001B3ULL /* odd: the polynomial hash's base */

/* -- an open-addressing map of nonzero uint64 keys to int32 values -------------------------- */

typedef struct {
    uint64_t *keys; /* 0 = empty slot */
    int32_t *values;
    Py_ssize_t mask;
    Py_ssize_t used;
} IntMap;

static void intmap_free(IntMap *m) {
    PyMem_Free(m->keys);
    PyMem_Free(m->values);
    memset(m, 0, sizeof(*m));
}

/* Room for at least `count` keys at load <= 1/2. */
static int intmap_init(IntMap *m, Py_ssize_t count) {
    memset(m, 0, sizeof(*m));
    Py_ssize_t slots = 16;
    while (slots < count * 2 + 2) {
        if (slots > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(uint64_t)) {
            PyErr_NoMemory();
            return -1;
        }
        slots *= 2;
    }
    m->keys = PyMem_Calloc((size_t)slots, sizeof(uint64_t));
    m->values = PyMem_Malloc((size_t)slots * sizeof(int32_t));
    if (!m->keys || !m->values) {
        intmap_free(m);
        PyErr_NoMemory();
        return -1;
    }
    m->mask = slots - 1;
    return 0;
}

static inline int32_t intmap_get(const IntMap *m, uint64_t key) {
    Py_ssize_t slot = (Py_ssize_t)(mix64(key) & (uint64_t)m->mask);
    for (;;) {
        uint64_t k = m->keys[slot];
        if (k == key) return m->values[slot];
        if (k == 0) return -1;
        slot = (slot + 1) & m->mask;
    }
}

/* Sets (or overwrites) key -> value; the map was sized for every key put (no growth). */
static int intmap_put(IntMap *m, uint64_t key, int32_t value) {
    if ((m->used + 1) * 2 > m->mask + 1) {
        PyErr_SetString(PyExc_RuntimeError, "bpe_merge: map overfull");
        return -1;
    }
    Py_ssize_t slot = (Py_ssize_t)(mix64(key) & (uint64_t)m->mask);
    for (;;) {
        uint64_t k = m->keys[slot];
        if (k == key) {
            m->values[slot] = value;
            return 0;
        }
        if (k == 0) {
            m->keys[slot] = key;
            m->values[slot] = value;
            m->used++;
            return 0;
        }
        slot = (slot + 1) & m->mask;
    }
}

static inline uint64_t pair_key(int32_t left, int32_t right) {
    return ((uint64_t)(uint32_t)left << 32 | (uint64_t)(uint32_t)right) + 1;
}

/* -- the Merger object ------------------------------------------------------------------ */

#define BYTE_TABLES 10 /* byte_level entries by length: a table for each of 3..8 bytes, one for longer */

/* A slot of the byte_level entry table: an entry of up to 8 bytes is its bytes packed in `key`,
 * a longer one its hash (then checked against its bytes in the pool); len 0 is an empty slot. */
typedef struct {
    uint64_t key;
    int32_t id;
    int32_t len;
} ByteEntry;

typedef struct {
    PyObject_HEAD
    PyObject *vocab;        /* the model's {piece: id} dict (ignore_merges looks words up in it) */
    PyObject **id_objects;  /* per id 0..top: the vocabulary's int object, or NULL */
    Py_ssize_t size;        /* top + 1 */
    IntMap chars;           /* code point + 1 -> id of the one-character entry */
    IntMap pairs;           /* merges: pair_key(left, right) -> rank */
    int32_t *results;       /* merges: rank -> the id it makes */
    Py_ssize_t n_results;
    int token_id;           /* merge_priority="token_id" */
    /* token_id: every vocabulary string (code points in `pool`), hashed */
    Py_UCS4 *pool;
    Py_ssize_t *entry_off;
    int32_t *entry_len;
    uint64_t *entry_hash;
    int32_t *entry_id;
    Py_ssize_t entries;
    int32_t *slots;         /* entry index + 1, 0 = empty */
    Py_ssize_t slot_mask;
    uint64_t *entry_pow;    /* per entry: HASH_BASE ** its length */
    int32_t *piece_entry;   /* per id: the entry of its piece (the pure `_vocab_r`), -1 none */
    int ignore_merges;
    int32_t byte_ids[256];  /* byte_fallback: the <0xHH> ids, -1 for none */
    int has_bytes;          /* byte_fallback is on */
    int32_t unk_id;         /* the unk token's id; -1 for no unk token, -2 for one missing from the vocabulary */
    int fuse_unk;
    int block;              /* unknown_chars="block" */
    Py_ssize_t scan_limit;
    int32_t mark;           /* the cut mark's code point, -1 for no cut */
    IntMap unsafe;          /* code point + 1 -> 1: characters before which no cut is made */
    Py_ssize_t cut_from;    /* words longer than this are cut */
    Py_ssize_t cache_size;
    Py_ssize_t cached_chars;
    /* byte_level (token_id only): words are text, merged over their UTF-8 bytes */
    int byte_level;
    uint8_t *bpool;         /* every entry's bytes */
    Py_ssize_t *boff;       /* per id: where its bytes are in `bpool` */
    ByteEntry *bslots[BYTE_TABLES]; /* per entry length (3..8, then all longer): open addressing, load <= 1/2 */
    Py_ssize_t bmask[BYTE_TABLES];
    Py_ssize_t max_len;     /* the longest entry, in bytes */
    int32_t byte_rank[256]; /* the id of each one-byte entry */
    int32_t *pair_rank;     /* the id of each two-byte entry, by (first << 8 | second); NONE_RANK for none */
    struct CacheSlot *cache_slots; /* the word cache (byte_level) */
    Py_ssize_t cache_mask;
    Py_ssize_t cache_used;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    int ready;
} Merger;

static void Merger_dealloc(Merger *self) {
    Py_XDECREF(self->vocab);
    if (self->id_objects) {
        for (Py_ssize_t i = 0; i < self->size; i++) Py_XDECREF(self->id_objects[i]);
        PyMem_Free(self->id_objects);
    }
    intmap_free(&self->chars);
    intmap_free(&self->pairs);
    intmap_free(&self->unsafe);
    PyMem_Free(self->results);
    PyMem_Free(self->pool);
    PyMem_Free(self->entry_off);
    PyMem_Free(self->entry_len);
    PyMem_Free(self->entry_hash);
    PyMem_Free(self->entry_id);
    PyMem_Free(self->slots);
    PyMem_Free(self->piece_entry);
    PyMem_Free(self->entry_pow);
    PyMem_Free(self->bpool);
    PyMem_Free(self->boff);
    for (int t = 0; t < BYTE_TABLES; t++) PyMem_Free(self->bslots[t]);
    PyMem_Free(self->pair_rank);
    PyMem_Free(self->cache_slots);
    PyMem_Free(self->arena);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* An id in 0..size-1 from an int object, -1 with an exception set otherwise. */
static int32_t read_id(PyObject *obj, Py_ssize_t size) {
    if (!PyLong_Check(obj)) {
        PyErr_SetString(PyExc_TypeError, "ids must be int");
        return -1;
    }
    Py_ssize_t id = PyLong_AsSsize_t(obj);
    if (id == -1 && PyErr_Occurred()) return -1;
    if (id < 0 || id >= size) {
        PyErr_SetString(PyExc_ValueError, "id out of range");
        return -1;
    }
    return (int32_t)id;
}

static inline uint64_t hash_text(int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    uint64_t h = 0;
    for (Py_ssize_t i = start; i < end; i++) h = h * HASH_BASE + (uint64_t)PyUnicode_READ(kind, data, i) + 1;
    return h;
}

/* token_id: the string table of every vocabulary entry, and each id's piece. */
static int build_strings(Merger *self, PyObject *vocab_r) {
    Py_ssize_t n = PyDict_GET_SIZE(self->vocab);
    if (n >= INT32_MAX / 4) {
        PyErr_SetString(PyExc_OverflowError, "vocabulary too large");
        return -1;
    }
    Py_ssize_t total = 0, pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(self->vocab, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be str");
            return -1;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(key);
        if (length >= INT32_MAX || total > PY_SSIZE_T_MAX / 8 - length) return PyErr_NoMemory(), -1;
        total += length;
    }
    size_t count = (size_t)(n ? n : 1);
    self->pool = PyMem_Malloc((size_t)(total ? total : 1) * sizeof(Py_UCS4));
    self->entry_off = PyMem_Malloc(count * sizeof(Py_ssize_t));
    self->entry_len = PyMem_Malloc(count * sizeof(int32_t));
    self->entry_hash = PyMem_Malloc(count * sizeof(uint64_t));
    self->entry_id = PyMem_Malloc(count * sizeof(int32_t));
    Py_ssize_t slots = 16;
    while (slots < n * 2 + 2) slots *= 2;
    self->slots = PyMem_Calloc((size_t)slots, sizeof(int32_t));
    self->slot_mask = slots - 1;
    self->piece_entry = PyMem_Malloc((size_t)self->size * sizeof(int32_t));
    self->entry_pow = PyMem_Malloc(count * sizeof(uint64_t));
    if (!self->pool || !self->entry_off || !self->entry_len || !self->entry_hash || !self->entry_id || !self->slots ||
        !self->piece_entry || !self->entry_pow)
        return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < self->size; i++) self->piece_entry[i] = -1;
    Py_ssize_t at = 0, e = 0;
    pos = 0;
    while (PyDict_Next(self->vocab, &pos, &key, &value)) {
        if (e >= n) break; /* the dict cannot change here; a guard all the same */
        int32_t id = read_id(value, self->size);
        if (id < 0) return -1;
        Py_ssize_t length = PyUnicode_GET_LENGTH(key);
        if (length > total - at) {
            PyErr_SetString(PyExc_RuntimeError, "vocabulary changed while read");
            return -1;
        }
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        uint64_t h = 0, p = 1;
        for (Py_ssize_t i = 0; i < length; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            self->pool[at + i] = c;
            h = h * HASH_BASE + (uint64_t)c + 1;
            p *= HASH_BASE;
        }
        self->entry_pow[e] = p;
        /* the usual reverse map (`invert`) holds the very key object: its piece is this entry */
        PyObject *piece = PyDict_GetItemWithError(vocab_r, value);
        if (piece == key) self->piece_entry[id] = (int32_t)e;
        else if (PyErr_Occurred()) return -1;
        self->entry_off[e] = at;
        self->entry_len[e] = (int32_t)length;
        self->entry_hash[e] = h;
        self->entry_id[e] = id;
        Py_ssize_t slot = (Py_ssize_t)(mix64(h) & (uint64_t)self->slot_mask);
        while (self->slots[slot]) slot = (slot + 1) & self->slot_mask;
        self->slots[slot] = (int32_t)(e + 1);
        at += length;
        e++;
    }
    self->entries = e;
    pos = 0;
    while (PyDict_Next(vocab_r, &pos, &key, &value)) { /* any other piece: found by its text */
        int32_t id = read_id(key, self->size);
        if (id < 0) return -1;
        if (!PyUnicode_Check(value)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be str");
            return -1;
        }
        if (self->piece_entry[id] >= 0 && self->entry_len[self->piece_entry[id]] == PyUnicode_GET_LENGTH(value)) {
            const Py_UCS4 *text = self->pool + self->entry_off[self->piece_entry[id]];
            Py_ssize_t i = 0, length = PyUnicode_GET_LENGTH(value);
            while (i < length && text[i] == PyUnicode_READ_CHAR(value, i)) i++;
            if (i == length) continue;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(value);
        int kind = PyUnicode_KIND(value);
        const void *data = PyUnicode_DATA(value);
        uint64_t h = hash_text(kind, data, 0, length);
        Py_ssize_t slot = (Py_ssize_t)(mix64(h) & (uint64_t)self->slot_mask);
        int32_t found = -1;
        for (int32_t s; (s = self->slots[slot]) != 0; slot = (slot + 1) & self->slot_mask) {
            Py_ssize_t c = s - 1;
            if (self->entry_hash[c] != h || self->entry_len[c] != length) continue;
            const Py_UCS4 *text = self->pool + self->entry_off[c];
            Py_ssize_t i = 0;
            while (i < length && text[i] == PyUnicode_READ(kind, data, i)) i++;
            if (i == length) {
                found = (int32_t)c;
                break;
            }
        }
        if (found < 0) {
            PyErr_SetString(PyExc_ValueError, "a piece of the reverse vocabulary is not in the vocabulary");
            return -1;
        }
        self->piece_entry[id] = found;
    }
    return 0;
}


/* -- byte_level: entries keyed by their bytes ------------------------------------------- */

#define ALPHABET_CHARS 0x144 /* the byte alphabet's code points are below this */

/* The byte each code point of the GPT-2 byte alphabet spells, -1 for one outside it
 * (polytok/text/byte_alphabet.py, after HF byte_level.rs bytes_char: the printable Latin-1
 * bytes are themselves; the other 68, in order, are U+0100 onwards). Filled at module init. */
static int16_t alphabet_byte[ALPHABET_CHARS];

static void fill_alphabet(void) {
    for (int c = 0; c < ALPHABET_CHARS; c++) alphabet_byte[c] = -1;
    int extra = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        alphabet_byte[printable ? b : 0x100 + extra++] = (int16_t)b;
    }
}

/* A hash of n bytes (8 at a time, then a final avalanche). */
static inline uint64_t hash_bytes(const uint8_t *p, Py_ssize_t n) {
    uint64_t h = (uint64_t)n * 0x9E3779B97F4A7C15ULL;
    while (n >= 8) {
        uint64_t chunk;
        memcpy(&chunk, p, 8);
        h = (h ^ chunk) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t tail = 0;
    memcpy(&tail, p, (size_t)n);
    return mix64((h ^ tail) * 0xC4CEB9FE1A85EC53ULL);
}

/* The bytes p[0..n) (n <= 8) packed in one integer, the first in the low byte. */
static inline uint64_t pack_bytes(const uint8_t *p, Py_ssize_t n) {
    uint64_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) k |= (uint64_t)p[i] << (8 * i);
    return k;
}

/* `pack_bytes` of p[0..n) where p[0..8) may be read (the word buffers have 8 bytes of slack). */
static inline uint64_t pack_padded(const uint8_t *p, Py_ssize_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t k;
    memcpy(&k, p, 8);
    return n >= 8 ? k : k & ((1ULL << (8 * n)) - 1);
#else
    return pack_bytes(p, n);
#endif
}

static inline uint64_t short_hash(uint64_t key, Py_ssize_t n) {
    return mix64(key ^ (uint64_t)n * 0x9E3779B97F4A7C15ULL);
}

/* The id of the entry spelling p[0..n), NONE_RANK for none (tiktoken's `ranks.get(piece)`);
 * p[0..max(n, 8)) may be read. */
static inline int32_t bytes_rank(const Merger *m, const uint8_t *p, Py_ssize_t n) {
    if (n == 1) return m->byte_rank[p[0]];
    if (n == 2) return m->pair_rank[(size_t)p[0] << 8 | p[1]];
    if (n > m->max_len || n <= 0) return NONE_RANK;
    uint64_t key, h;
    if (n <= 8) {
        key = pack_padded(p, n);
        h = short_hash(key, n);
    } else {
        key = h = hash_bytes(p, n);
    }
    int t = n <= 8 ? (int)n : BYTE_TABLES - 1;
    const ByteEntry *table = m->bslots[t];
    Py_ssize_t mask = m->bmask[t];
    for (Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)mask);; slot = (slot + 1) & mask) {
        const ByteEntry *e = &table[slot];
        if (e->len == 0) return NONE_RANK;
        if (e->key == key && e->len == n &&
            (n <= 8 || memcmp(m->bpool + m->boff[e->id], p, (size_t)n) == 0))
            return e->id;
    }
}

/* byte_level: every vocabulary entry written in the byte alphabet, keyed by the bytes it spells
 * (an entry with any other character spells no bytes: no word reaches it, and it is left out).
 * Needs an injective vocabulary and an entry for each of the 256 bytes (the model checks both). */
/* What `build_bytes` sizes its tables by, counted in `Merger_init`'s first walk over the vocabulary
 * (one walk fewer over a large vocabulary: each touches every key object). */
typedef struct {
    Py_ssize_t total;               /* the keys' characters */
    Py_ssize_t counts[BYTE_TABLES]; /* keys per length 0..8, then all longer */
    int too_long;                   /* a key of INT32_MAX characters or more, or total past PY_SSIZE_T_MAX / 8 */
} KeyLengths;

static void count_key(KeyLengths *lengths, Py_ssize_t length) {
    if (length >= INT32_MAX || lengths->total > PY_SSIZE_T_MAX / 8 - length) {
        lengths->too_long = 1;
        return;
    }
    lengths->total += length;
    lengths->counts[length <= 8 ? length : BYTE_TABLES - 1]++;
}

static int build_bytes(Merger *self, PyObject *vocab_r, const KeyLengths *lengths) {
    Py_ssize_t n = PyDict_GET_SIZE(self->vocab);
    if (n >= INT32_MAX / 4) {
        PyErr_SetString(PyExc_OverflowError, "vocabulary too large");
        return -1;
    }
    if (PyDict_GET_SIZE(vocab_r) != n) {
        PyErr_SetString(PyExc_ValueError, "byte_level takes a vocabulary with one piece per id");
        return -1;
    }
    if (lengths->too_long) return PyErr_NoMemory(), -1;
    Py_ssize_t total = lengths->total, pos = 0;
    const Py_ssize_t *counts = lengths->counts;
    PyObject *key, *value;
    self->bpool = PyMem_Malloc((size_t)(total ? total : 1));
    self->boff = PyMem_Calloc((size_t)(self->size ? self->size : 1), sizeof(Py_ssize_t));
    self->pair_rank = PyMem_Malloc((size_t)65536 * sizeof(int32_t));
    if (!self->bpool || !self->boff || !self->pair_rank) return PyErr_NoMemory(), -1;
    for (int t = 3; t < BYTE_TABLES; t++) {
        Py_ssize_t slots = 16;
        while (slots < counts[t] * 2 + 2) slots *= 2;
        self->bslots[t] = PyMem_Calloc((size_t)slots, sizeof(ByteEntry));
        if (!self->bslots[t]) return PyErr_NoMemory(), -1;
        self->bmask[t] = slots - 1;
    }
    for (Py_ssize_t i = 0; i < 65536; i++) self->pair_rank[i] = NONE_RANK;
    for (int b = 0; b < 256; b++) self->byte_rank[b] = NONE_RANK;
    Py_ssize_t at = 0, e = 0, longest = 0;
    pos = 0;
    while (PyDict_Next(self->vocab, &pos, &key, &value)) {
        Py_ssize_t length = PyUnicode_GET_LENGTH(key);
        if (e >= n || length > total - at) {
            PyErr_SetString(PyExc_RuntimeError, "vocabulary changed while read");
            return -1;
        }
        int32_t id = read_id(value, self->size);
        if (id < 0) return -1;
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        if (kind == PyUnicode_4BYTE_KIND || length == 0) continue; /* no byte spells it */
        uint8_t *bytes = self->bpool + at;
        Py_ssize_t i = 0;
        for (; i < length; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c >= ALPHABET_CHARS || alphabet_byte[c] < 0) break;
            bytes[i] = (uint8_t)alphabet_byte[c];
        }
        if (i < length) continue;
        uint64_t packed, h;
        if (length <= 8) {
            packed = pack_bytes(bytes, length);
            h = short_hash(packed, length);
        } else {
            packed = h = hash_bytes(bytes, length);
        }
        self->boff[id] = at;
        if (length == 1) {
            self->byte_rank[bytes[0]] = id;
        } else if (length == 2) {
            self->pair_rank[(size_t)bytes[0] << 8 | bytes[1]] = id;
        } else {
            int t = length <= 8 ? (int)length : BYTE_TABLES - 1;
            ByteEntry *table = self->bslots[t];
            Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)self->bmask[t]);
            while (table[slot].len) slot = (slot + 1) & self->bmask[t];
            table[slot] = (ByteEntry){packed, id, (int32_t)length};
        }
        if (length > longest) longest = length;
        at += length;
        e++;
    }
    self->max_len = longest;
    for (int b = 0; b < 256; b++)
        if (self->byte_rank[b] == NONE_RANK) {
            PyErr_Format(PyExc_ValueError, "byte_level takes an entry for each byte; byte %d has none", b);
            return -1;
        }
    return 0;
}

/* Merger(vocab, vocab_r, top, lefts, rights, results, token_id, ignore_merges, scan_limit,
 *        mark, unsafe, cut_from, cache_size, cached_chars, byte_ids, unk_id, fuse_unk, block)
 *   vocab: {piece: id}; vocab_r: {id: piece}; top: the largest id; lefts, rights, results: per
 *   rank the pair's ids and the id it makes (merge_priority="merges"; empty lists for
 *   "token_id"); mark: the cut mark (a one-character str, "" for no cut); unsafe: a list of
 *   one-character str; byte_ids: None, or the 256 <0xHH> ids (None for a missing one); unk_id:
 *   -1 for no unk token, -2 for one the vocabulary lacks. */
static int Merger_init(Merger *self, PyObject *args, PyObject *kwargs) {
    PyObject *vocab, *vocab_r, *lefts, *rights, *results, *mark, *unsafe, *byte_ids;
    Py_ssize_t top, scan_limit, cut_from, cache_size, cached_chars, unk_id;
    int token_id, ignore_merges, fuse_unk, block, byte_level = 0;
    static char *kwlist[] = {"vocab", "vocab_r", "top", "lefts", "rights", "results", "token_id", "ignore_merges",
                             "scan_limit", "mark", "unsafe", "cut_from", "cache_size", "cached_chars", "byte_ids",
                             "unk_id", "fuse_unk", "block", "byte_level", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!nO!O!O!ppnUO!nnnOnpp|p", kwlist, &PyDict_Type, &vocab,
                                     &PyDict_Type, &vocab_r, &top, &PyList_Type, &lefts, &PyList_Type, &rights,
                                     &PyList_Type, &results, &token_id, &ignore_merges, &scan_limit, &mark,
                                     &PyList_Type, &unsafe, &cut_from, &cache_size, &cached_chars, &byte_ids,
                                     &unk_id, &fuse_unk, &block, &byte_level))
        return -1;
    if (self->id_objects) {
        PyErr_SetString(PyExc_RuntimeError, "Merger is already initialised");
        return -1;
    }
    if (top < -1 || top >= INT32_MAX - 1) {
        PyErr_SetString(PyExc_ValueError, "top id out of range");
        return -1;
    }
    if (PyList_GET_SIZE(lefts) != PyList_GET_SIZE(rights) || PyList_GET_SIZE(lefts) > PyList_GET_SIZE(results) ||
        PyList_GET_SIZE(results) >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "lefts, rights and results do not match");
        return -1;
    }
    if (PyUnicode_GET_LENGTH(mark) > 1 || scan_limit < 0 || scan_limit > STACK_SYMBOLS || cut_from < 0) {
        PyErr_SetString(PyExc_ValueError, "bad mark, scan_limit or cut_from");
        return -1;
    }
    if (unk_id < -2 || unk_id > top || (byte_ids != Py_None && (!PyList_Check(byte_ids) ||
                                                                 PyList_GET_SIZE(byte_ids) != 256))) {
        PyErr_SetString(PyExc_ValueError, "bad unk_id or byte_ids");
        return -1;
    }
    self->vocab = Py_NewRef(vocab);
    self->size = top + 1;
    self->unk_id = (int32_t)unk_id;
    self->fuse_unk = fuse_unk;
    self->block = block;
    self->has_bytes = byte_ids != Py_None;
    for (int b = 0; b < 256; b++) {
        self->byte_ids[b] = -1;
        if (!self->has_bytes || PyList_GET_ITEM(byte_ids, b) == Py_None) continue;
        self->byte_ids[b] = read_id(PyList_GET_ITEM(byte_ids, b), self->size);
        if (self->byte_ids[b] < 0) return -1;
    }
    self->id_objects = PyMem_Calloc((size_t)(self->size ? self->size : 1), sizeof(PyObject *));
    if (!self->id_objects) return PyErr_NoMemory(), -1;
    self->token_id = token_id;
    self->ignore_merges = ignore_merges;
    self->scan_limit = scan_limit;
    self->cut_from = cut_from;
    self->cache_size = cache_size;
    self->cached_chars = cached_chars;
    self->mark = PyUnicode_GET_LENGTH(mark) ? (int32_t)PyUnicode_READ_CHAR(mark, 0) : -1;

    /* the ids' int objects and the one-character entries */
    Py_ssize_t n_chars = 0, pos = 0;
    PyObject *key, *value;
    KeyLengths lengths = {0};
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyErr_SetString(PyExc_TypeError, "pieces must be str");
            return -1;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(key);
        n_chars += length == 1;
        if (byte_level) count_key(&lengths, length);
    }
    if (intmap_init(&self->chars, n_chars) < 0) return -1;
    pos = 0;
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        int32_t id = read_id(value, self->size);
        if (id < 0) return -1;
        if (!self->id_objects[id]) self->id_objects[id] = Py_NewRef(value);
        if (PyUnicode_GET_LENGTH(key) == 1) {
            if (self->chars.used >= n_chars) {
                PyErr_SetString(PyExc_RuntimeError, "vocabulary changed while read");
                return -1;
            }
            if (intmap_put(&self->chars, (uint64_t)PyUnicode_READ_CHAR(key, 0) + 1, id) < 0) return -1;
        }
    }
    Py_ssize_t n_unsafe = PyList_GET_SIZE(unsafe);
    if (intmap_init(&self->unsafe, n_unsafe) < 0) return -1;
    for (Py_ssize_t i = 0; i < n_unsafe; i++) {
        PyObject *ch = PyList_GET_ITEM(unsafe, i);
        if (!PyUnicode_Check(ch) || PyUnicode_GET_LENGTH(ch) != 1) {
            PyErr_SetString(PyExc_TypeError, "unsafe must hold one-character str");
            return -1;
        }
        if (intmap_put(&self->unsafe, (uint64_t)PyUnicode_READ_CHAR(ch, 0) + 1, 1) < 0) return -1;
    }

    if (byte_level && (!token_id || block || unk_id != -1 || self->has_bytes)) {
        PyErr_SetString(PyExc_ValueError, "byte_level takes token_id, and no unk token, byte fallback or block");
        return -1;
    }
    self->byte_level = byte_level;
    if (byte_level) {
        if (build_bytes(self, vocab_r, &lengths) < 0) return -1;
    } else if (token_id) {
        if (build_strings(self, vocab_r) < 0) return -1;
    } else {
        Py_ssize_t n_results = PyList_GET_SIZE(results), n_pairs = PyList_GET_SIZE(lefts);
        self->results = PyMem_Malloc((size_t)(n_results ? n_results : 1) * sizeof(int32_t));
        if (!self->results) return PyErr_NoMemory(), -1;
        self->n_results = n_results;
        for (Py_ssize_t i = 0; i < n_results; i++) {
            int32_t id = read_id(PyList_GET_ITEM(results, i), self->size);
            if (id < 0) return -1;
            self->results[i] = id;
        }
        if (intmap_init(&self->pairs, n_pairs) < 0) return -1;
        for (Py_ssize_t i = 0; i < n_pairs; i++) {
            int32_t left = read_id(PyList_GET_ITEM(lefts, i), self->size);
            if (left < 0) return -1;
            int32_t right = read_id(PyList_GET_ITEM(rights, i), self->size);
            if (right < 0) return -1;
            if (intmap_put(&self->pairs, pair_key(left, right), (int32_t)i) < 0) return -1;
        }
    }
    self->ready = 1;
    return 0;
}

/* -- ranks ------------------------------------------------------------------------------ */

/* The rank of the pair (left, right), NONE_RANK if it does not merge. */
static inline int32_t rank_of(const Merger *m, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return NONE_RANK; /* a blocked symbol (unknown_chars="block") */
    if (!m->token_id) {
        int32_t rank = m->pairs.used ? intmap_get(&m->pairs, pair_key(left, right)) : -1;
        return rank < 0 ? NONE_RANK : rank;
    }
    int32_t ea = m->piece_entry[left], eb = m->piece_entry[right];
    if (ea < 0 || eb < 0) return NONE_RANK;
    Py_ssize_t la = m->entry_len[ea], lb = m->entry_len[eb];
    uint64_t h = m->entry_hash[ea] * m->entry_pow[eb] + m->entry_hash[eb];
    const Py_UCS4 *a = m->pool + m->entry_off[ea], *b = m->pool + m->entry_off[eb];
    Py_ssize_t slot = (Py_ssize_t)(mix64(h) & (uint64_t)m->slot_mask);
    for (int32_t s; (s = m->slots[slot]) != 0; slot = (slot + 1) & m->slot_mask) {
        Py_ssize_t c = s - 1;
        if (m->entry_hash[c] != h || m->entry_len[c] != la + lb) continue;
        const Py_UCS4 *text = m->pool + m->entry_off[c];
        if (memcmp(text, a, (size_t)la * sizeof(Py_UCS4)) == 0 &&
            memcmp(text + la, b, (size_t)lb * sizeof(Py_UCS4)) == 0)
            return m->entry_id[c];
    }
    return NONE_RANK;
}

/* The id a merge of rank `rank` makes (`results[rank]`; the rank itself for token_id). */
static inline int32_t result_of(const Merger *m, int32_t rank) {
    if (m->token_id) return rank;
    return rank >= 0 && rank < m->n_results ? m->results[rank] : -1;
}

/* -- the merge loops ---------------------------------------------------------------------- */

/* `merge_scan`: the lowest rank, leftmost first. Returns the number of symbols left. */
static Py_ssize_t merge_scan(const Merger *m, int32_t *sym, Py_ssize_t n) {
    int32_t ranks[STACK_SYMBOLS];
    if (n < 2) return n;
    for (Py_ssize_t i = 0; i + 1 < n; i++) ranks[i] = rank_of(m, sym[i], sym[i + 1]);
    while (n >= 2) {
        Py_ssize_t at = 0;
        int32_t best = ranks[0];
        for (Py_ssize_t i = 1; i + 1 < n; i++)
            if (ranks[i] < best) {
                best = ranks[i];
                at = i;
            }
        if (best == NONE_RANK) break;
        sym[at] = result_of(m, best);
        memmove(sym + at + 1, sym + at + 2, (size_t)(n - at - 2) * sizeof(int32_t));
        memmove(ranks + at, ranks + at + 1, (size_t)(n - at - 2) * sizeof(int32_t));
        n--;
        if (at > 0) ranks[at - 1] = rank_of(m, sym[at - 1], sym[at]);
        if (at + 1 < n) ranks[at] = rank_of(m, sym[at], sym[at + 1]);
    }
    return n;
}

static inline void heap_push(uint64_t *heap, Py_ssize_t *size, uint64_t entry) {
    Py_ssize_t i = (*size)++;
    while (i > 0) {
        Py_ssize_t parent = (i - 1) / 2;
        if (heap[parent] <= entry) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = entry;
}

static inline uint64_t heap_pop(uint64_t *heap, Py_ssize_t *size) {
    uint64_t top = heap[0];
    uint64_t last = heap[--*size];
    Py_ssize_t n = *size, i = 0;
    for (;;) {
        Py_ssize_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap[child + 1] < heap[child]) child++;
        if (heap[child] >= last) break;
        heap[i] = heap[child];
        i = child;
    }
    if (n > 0) heap[i] = last;
    return top;
}

/* Scratch of `merge_heap` for n symbols: links, alive flags and the heap (at most 3n entries:
 * n - 1 first, two per merge). */
typedef struct {
    int32_t *before, *after;
    uint8_t *alive;
    uint64_t *heap;
} HeapScratch;

static void scratch_free(HeapScratch *s) {
    PyMem_RawFree(s->before);
    PyMem_RawFree(s->after);
    PyMem_RawFree(s->alive);
    PyMem_RawFree(s->heap);
}

static int scratch_alloc(HeapScratch *s, Py_ssize_t n) {
    memset(s, 0, sizeof(*s));
    if (n > (PY_SSIZE_T_MAX / 3 - 1) / (Py_ssize_t)sizeof(uint64_t)) return -1;
    s->before = PyMem_RawMalloc((size_t)n * sizeof(int32_t));
    s->after = PyMem_RawMalloc((size_t)n * sizeof(int32_t));
    s->alive = PyMem_RawMalloc((size_t)n);
    s->heap = PyMem_RawMalloc((size_t)(3 * n + 1) * sizeof(uint64_t));
    if (!s->before || !s->after || !s->alive || !s->heap) {
        scratch_free(s);
        return -1;
    }
    return 0;
}

/* `merge_heap` (HF `Word::merge_all`) without dropout; touches no Python object. Returns the
 * number of symbols left (compacted to the front of `sym`). n < INT32_MAX. */
static Py_ssize_t merge_heap(const Merger *m, int32_t *sym, Py_ssize_t n, HeapScratch *s) {
    if (n < 2) return n;
    int32_t *before = s->before, *after = s->after;
    uint8_t *alive = s->alive;
    uint64_t *heap = s->heap;
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        before[i] = (int32_t)(i - 1);
        after[i] = i + 1 < n ? (int32_t)(i + 1) : -1;
        alive[i] = 1;
    }
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        int32_t rank = rank_of(m, sym[i], sym[i + 1]);
        if (rank != NONE_RANK) heap_push(heap, &size, (uint64_t)(uint32_t)rank << 32 | (uint64_t)i);
    }
    while (size > 0) {
        uint64_t top = heap_pop(heap, &size);
        int32_t left = (int32_t)(top & 0xFFFFFFFFu);
        int32_t merged = result_of(m, (int32_t)(top >> 32));
        int32_t right = after[left];
        if (!alive[left] || right < 0) continue;
        int32_t current = rank_of(m, sym[left], sym[right]);
        if (current == NONE_RANK || result_of(m, current) != merged) continue;
        sym[left] = merged;
        alive[right] = 0;
        int32_t follow = after[left] = after[right];
        if (follow >= 0) {
            before[follow] = left;
            int32_t rank = rank_of(m, merged, sym[follow]);
            if (rank != NONE_RANK) heap_push(heap, &size, (uint64_t)(uint32_t)rank << 32 | (uint64_t)(uint32_t)left);
        }
        int32_t previous = before[left];
        if (previous >= 0) {
            int32_t rank = rank_of(m, sym[previous], merged);
            if (rank != NONE_RANK)
                heap_push(heap, &size, (uint64_t)(uint32_t)rank << 32 | (uint64_t)(uint32_t)previous);
        }
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (alive[i]) sym[k++] = sym[i];
    return k;
}

/* Merges sym[0..n) in place; returns the count left, or -1 with MemoryError set. */
static Py_ssize_t merge_symbols(const Merger *m, int32_t *sym, Py_ssize_t n) {
    if (n < 2) return n;
    if (n <= m->scan_limit) return merge_scan(m, sym, n);
    HeapScratch s;
    if (scratch_alloc(&s, n) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t left;
    if (n >= GIL_FREE_SYMBOLS) {
        Py_BEGIN_ALLOW_THREADS
        left = merge_heap(m, sym, n, &s);
        Py_END_ALLOW_THREADS
    } else {
        left = merge_heap(m, sym, n, &s);
    }
    scratch_free(&s);
    return left;
}


/* -- byte_level: merging a word's bytes ---------------------------------------------------- */

#define SCAN_BYTES 64 /* words up to this many bytes merge by the scan, in stack arrays */

/* The scan (`merge_scan`) over the bytes w[0..n), 2 <= n <= SCAN_BYTES: tiktoken's
 * `_byte_pair_merge` (lib.rs), lowest rank first, leftmost among equals. The ids into `out`;
 * returns their count. */
static Py_ssize_t scan_bytes(const Merger *m, const uint8_t *w, Py_ssize_t n, int32_t *out) {
    Py_ssize_t start[SCAN_BYTES + 1];
    int32_t ranks[SCAN_BYTES];
    for (Py_ssize_t i = 0; i < n; i++) {
        start[i] = i;
        out[i] = m->byte_rank[w[i]];
    }
    start[n] = n;
    for (Py_ssize_t i = 0; i + 1 < n; i++) ranks[i] = bytes_rank(m, w + i, 2);
    Py_ssize_t k = n; /* symbols left */
    while (k >= 2) {
        Py_ssize_t best_at = 0;
        int32_t best = ranks[0];
        for (Py_ssize_t i = 1; i + 1 < k; i++)
            if (ranks[i] < best) {
                best = ranks[i];
                best_at = i;
            }
        if (best == NONE_RANK) break;
        Py_ssize_t i = best_at;
        out[i] = best;
        memmove(out + i + 1, out + i + 2, (size_t)(k - i - 2) * sizeof(int32_t));
        memmove(start + i + 1, start + i + 2, (size_t)(k - i - 1) * sizeof(Py_ssize_t));
        memmove(ranks + i, ranks + i + 1, (size_t)(k - i - 2) * sizeof(int32_t));
        k--;
        if (i > 0) ranks[i - 1] = bytes_rank(m, w + start[i - 1], start[i + 1] - start[i - 1]);
        if (i + 1 < k) ranks[i] = bytes_rank(m, w + start[i], start[i + 2] - start[i]);
    }
    return k;
}

/* The heap (`merge_heap`, tiktoken's `_byte_pair_merge_large`) over the bytes w[0..n): symbol i
 * spans w[i..after[i]) (to n for the last); a popped (rank, left) is stale when its left symbol
 * is gone, has no right neighbour, or the pair there no longer spells the entry of that rank.
 * Touches no Python object. The ids into `out`; returns their count. */
static Py_ssize_t heap_bytes(const Merger *m, const uint8_t *w, Py_ssize_t n, int32_t *out, HeapScratch *s) {
    int32_t *before = s->before, *after = s->after;
    uint8_t *alive = s->alive;
    uint64_t *heap = s->heap;
    Py_ssize_t size = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        before[i] = (int32_t)(i - 1);
        after[i] = i + 1 < n ? (int32_t)(i + 1) : -1;
        alive[i] = 1;
        out[i] = m->byte_rank[w[i]];
    }
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        int32_t rank = bytes_rank(m, w + i, 2);
        if (rank != NONE_RANK) heap_push(heap, &size, (uint64_t)(uint32_t)rank << 32 | (uint64_t)i);
    }
    while (size > 0) {
        uint64_t top = heap_pop(heap, &size);
        int32_t left = (int32_t)(top & 0xFFFFFFFFu), rank = (int32_t)(top >> 32);
        int32_t right = after[left];
        if (!alive[left] || right < 0) continue;
        Py_ssize_t end = after[right] >= 0 ? after[right] : n;
        if (bytes_rank(m, w + left, end - left) != rank) continue;
        out[left] = rank;
        alive[right] = 0;
        int32_t follow = after[left] = after[right];
        if (follow >= 0) {
            before[follow] = left;
            Py_ssize_t follow_end = after[follow] >= 0 ? after[follow] : n;
            int32_t next = bytes_rank(m, w + left, follow_end - left);
            if (next != NONE_RANK) heap_push(heap, &size, (uint64_t)(uint32_t)next << 32 | (uint64_t)(uint32_t)left);
        }
        int32_t previous = before[left];
        if (previous >= 0) {
            Py_ssize_t merged_end = follow >= 0 ? follow : n;
            int32_t next = bytes_rank(m, w + previous, merged_end - previous);
            if (next != NONE_RANK)
                heap_push(heap, &size, (uint64_t)(uint32_t)next << 32 | (uint64_t)(uint32_t)previous);
        }
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (alive[i]) out[k++] = out[i];
    return k;
}

/* The ids of the bytes w[0..n) (n >= 1) into `out` (room for n): their count, or -1 with
 * MemoryError set. */
static Py_ssize_t merge_bytes(const Merger *m, const uint8_t *w, Py_ssize_t n, int32_t *out) {
    if (n == 1) {
        out[0] = m->byte_rank[w[0]];
        return 1;
    }
    if (n <= SCAN_BYTES) return scan_bytes(m, w, n, out);
    HeapScratch s;
    if (scratch_alloc(&s, n) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t left;
    if (n >= GIL_FREE_SYMBOLS) {
        Py_BEGIN_ALLOW_THREADS
        left = heap_bytes(m, w, n, out, &s);
        Py_END_ALLOW_THREADS
    } else {
        left = heap_bytes(m, w, n, out, &s);
    }
    scratch_free(&s);
    return left;
}

/* The UTF-8 bytes of `cp` into `out`: their count, or -1 for a surrogate (not UTF-8). */
static inline int utf8_bytes(Py_UCS4 cp, uint8_t *out) {
    if (cp >= 0xD800 && cp <= 0xDFFF) return -1;
    return utf8_encode(cp, out);
}

/* `BPE._symbols` of word[start..end) (no affixes; the word's code units of `kind` at `data`,
 * PyUnicode_4BYTE_KIND for an array of code points): the initial symbol ids into `sym` (room for
 * 4 per character: a character adds at most its 4 byte tokens, or a pending unk and itself
 * after a character that added none). Returns their count, or -1 when the pure loop would
 * raise (the word is left to it). A blocked character is the symbol -1. */
static Py_ssize_t word_symbols(const Merger *m, int kind, const void *data, Py_ssize_t start, Py_ssize_t end,
                               int32_t *sym) {
    Py_ssize_t k = 0;
    int pending = 0; /* an unk symbol not yet written (HF writes byte tokens before it) */
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 cp = PyUnicode_READ(kind, data, i);
        int32_t id = intmap_get(&m->chars, (uint64_t)cp + 1);
        if (id >= 0) {
            if (pending) {
                sym[k++] = m->unk_id;
                pending = 0;
            }
            sym[k++] = id;
            continue;
        }
        if (m->block) {
            sym[k++] = -1;
            continue;
        }
        if (m->has_bytes) {
            uint8_t bytes[4];
            int count = utf8_bytes(cp, bytes);
            if (count < 0) return -1; /* not UTF-8: the pure loop raises */
            int all = 1;
            for (int b = 0; b < count; b++) all &= m->byte_ids[bytes[b]] >= 0;
            if (all) {
                for (int b = 0; b < count; b++) sym[k++] = m->byte_ids[bytes[b]];
                continue;
            }
        }
        if (m->unk_id == -1) continue; /* no unk token: the character is dropped */
        if (m->unk_id < 0) return -1;  /* the unk token is missing: the pure loop raises */
        if (pending && m->fuse_unk) continue;
        if (pending) sym[k++] = m->unk_id;
        pending = 1;
    }
    if (pending) sym[k++] = m->unk_id;
    return k;
}

/* `write_blocked`: the ids of sym[0..n) with each blocked symbol (-1) replaced by the byte
 * tokens of the next unknown character of word[start..end) that have one (none without
 * byte_fallback). Py_None (borrowed) when the pure loop would raise (a lone surrogate). */
static PyObject *write_blocked(const Merger *m, PyObject *word, Py_ssize_t start, Py_ssize_t end, const int32_t *sym,
                               Py_ssize_t n) {
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    Py_ssize_t next = start; /* where to look for the next unknown character */
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = sym[i];
        if (id >= 0) {
            PyObject *obj = id < m->size && m->id_objects[id] ? Py_NewRef(m->id_objects[id]) : PyLong_FromLong(id);
            if (!obj || PyList_Append(list, obj) < 0) {
                Py_XDECREF(obj);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(obj);
            continue;
        }
        if (!m->has_bytes) continue;
        Py_UCS4 cp = 0;
        while (next < end) {
            cp = PyUnicode_READ(kind, data, next++);
            if (intmap_get(&m->chars, (uint64_t)cp + 1) < 0) break;
        }
        uint8_t bytes[4];
        int count = utf8_bytes(cp, bytes);
        if (count < 0) {
            Py_DECREF(list);
            return Py_None;
        }
        for (int b = 0; b < count; b++) {
            int32_t byte = m->byte_ids[bytes[b]];
            if (byte < 0) continue;
            PyObject *obj = m->id_objects[byte] ? Py_NewRef(m->id_objects[byte]) : PyLong_FromLong(byte);
            if (!obj || PyList_Append(list, obj) < 0) {
                Py_XDECREF(obj);
                Py_DECREF(list);
                return NULL;
            }
            Py_DECREF(obj);
        }
    }
    return list;
}

static PyObject *ids_list(const Merger *m, const int32_t *sym, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = sym[i];
        PyObject *obj = id >= 0 && id < m->size && m->id_objects[id] ? Py_NewRef(m->id_objects[id])
                                                                      : PyLong_FromLong(id);
        if (!obj) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, obj);
    }
    return list;
}


/* byte_level: the ids of `word` (text; its UTF-8 bytes merge), uncached, into *ids: their count,
 * -2 when the pure loop takes the word (empty, or a lone surrogate, which is not UTF-8), -1 on error.
 * *ids is `stack` (room for 4 * STACK_SYMBOLS) or memory the caller frees with PyMem_Free.
 * With ignore_merges a word that spells an entry is that entry. */
static Py_ssize_t byte_word(const Merger *m, PyObject *word, int32_t *stack, int32_t **ids) {
    *ids = stack;
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n == 0 || n >= INT32_MAX / 4) return -2; /* (the pure loop takes any word) */
    uint8_t stack_bytes[4 * STACK_SYMBOLS + 8]; /* (8 bytes of slack: bytes_rank reads 8 at once) */
    uint8_t *w = stack_bytes;
    if (n > STACK_SYMBOLS) {
        w = PyMem_Malloc((size_t)n * 4 + 8);
        *ids = PyMem_Malloc((size_t)n * 4 * sizeof(int32_t));
        if (!w || !*ids) {
            if (w) PyMem_Free(w);
            if (*ids) PyMem_Free(*ids);
            *ids = stack;
            PyErr_NoMemory();
            return -1;
        }
    }
    Py_ssize_t count = -2;
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    Py_ssize_t len = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *chars = data;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS1 c = chars[i];
            if (c < 0x80) {
                w[len++] = c;
            } else {
                w[len++] = (uint8_t)(0xC0 | (c >> 6));
                w[len++] = (uint8_t)(0x80 | (c & 0x3F));
            }
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            uint8_t bytes[4];
            int size = utf8_bytes(PyUnicode_READ(kind, data, i), bytes);
            if (size < 0) goto done; /* not UTF-8: the pure loop raises */
            for (int b = 0; b < size; b++) w[len++] = bytes[b];
        }
    }
    if (m->ignore_merges) {
        int32_t whole = bytes_rank(m, w, len);
        if (whole != NONE_RANK) {
            (*ids)[0] = whole;
            count = 1;
            goto done;
        }
    }
    count = merge_bytes(m, w, len, *ids);
done:
    if (w != stack_bytes) PyMem_Free(w);
    return count;
}

/* `byte_word` as a new list, Py_None (borrowed) when the pure loop takes the word, NULL on error. */
static PyObject *byte_word_ids(const Merger *m, PyObject *word) {
    int32_t stack[4 * STACK_SYMBOLS];
    int32_t *ids;
    Py_ssize_t count = byte_word(m, word, stack, &ids);
    PyObject *result = count == -2 ? Py_None : count < 0 ? NULL : ids_list(m, ids, count);
    if (ids != stack) PyMem_Free(ids);
    return result;
}

/* -- the capsule's entries (kernel_api.h) ------------------------------------------------- */

/* Whether the entries decide this Merger's words: a byte_level one, or one over spelt words
 * without blocked characters or ignore_merges (its whole-word lookup reads the vocabulary dict). */
static int api_covers(PyObject *merger) {
    const Merger *m = (const Merger *)merger;
    return m->ready && (m->byte_level || (!m->block && !m->ignore_merges));
}

/* `byte_word` on code points, without the GIL: the tables only (fixed once built; the word
 * cache, written with the GIL held, is not read), scratch per call from the raw allocator.
 * 0 with the ids in out[0..*count) (room for 4 * n), 1 where the pure loop takes the word (a
 * surrogate, or no word), -1 out of memory. */
static int api_byte_word_ids(const Merger *m, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count) {
    uint8_t stack_bytes[4 * STACK_SYMBOLS + 8]; /* (8 bytes of slack: bytes_rank reads 8 at once) */
    uint8_t *w = stack_bytes;
    if (n > STACK_SYMBOLS) {
        w = PyMem_RawMalloc((size_t)n * 4 + 8);
        if (!w) return -1;
    }
    int status = 0;
    Py_ssize_t len = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int size = utf8_bytes(cps[i], w + len);
        if (size < 0) {
            status = 1; /* not UTF-8: the pure loop raises */
            goto done;
        }
        len += size;
    }
    memset(w + len, 0, 8);
    if (m->ignore_merges) {
        int32_t whole = bytes_rank(m, w, len);
        if (whole != NONE_RANK) {
            out[0] = whole;
            *count = 1;
            goto done;
        }
    }
    if (len == 1) {
        out[0] = m->byte_rank[w[0]];
        *count = 1;
    } else if (len <= SCAN_BYTES) {
        *count = scan_bytes(m, w, len, out);
    } else {
        HeapScratch s;
        if (scratch_alloc(&s, len) < 0) {
            status = -1;
            goto done;
        }
        *count = heap_bytes(m, w, len, out, &s);
        scratch_free(&s);
    }
done:
    if (w != stack_bytes) PyMem_RawFree(w);
    return status;
}

/* `BPE._word_ids` of one spelt word of n code points (`range_ids` without the GIL): the symbols,
 * then the scan or the heap, written to `out` (room for 4 * n). 1 where the pure loop raises. */
static int api_spelt_word_ids(const Merger *m, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count) {
    Py_ssize_t k = word_symbols(m, PyUnicode_4BYTE_KIND, cps, 0, n, out);
    if (k < 0) return 1;
    if (k >= 2 && k <= m->scan_limit) {
        k = merge_scan(m, out, k);
    } else if (k >= 2) {
        HeapScratch s;
        if (scratch_alloc(&s, k) < 0) return -1;
        k = merge_heap(m, out, k, &s);
        scratch_free(&s);
    }
    *count = k;
    return 0;
}

static int api_word_ids(PyObject *merger, const Py_UCS4 *cps, Py_ssize_t n, int32_t *out, Py_ssize_t *count) {
    const Merger *m = (const Merger *)merger;
    if (!api_covers(merger) || n <= 0 || n >= INT32_MAX / 4) return 1;
    return m->byte_level ? api_byte_word_ids(m, cps, n, out, count) : api_spelt_word_ids(m, cps, n, out, count);
}

/* `BPE._cut` of a word of n code points: where the chunk that starts at `start` ends (n for the
 * last chunk, and for a word that is not cut). */
static Py_ssize_t api_chunk_end(PyObject *merger, const Py_UCS4 *cps, Py_ssize_t n, Py_ssize_t start) {
    const Merger *m = (const Merger *)merger;
    if (n <= m->cut_from || m->mark < 0) return n;
    for (Py_ssize_t i = start + 1; i < n; i++) {
        if ((int32_t)cps[i] != m->mark) continue;
        uint64_t before = (uint64_t)cps[i - 1] + 1;
        if (intmap_get(&m->unsafe, before) >= 0 || intmap_get(&m->chars, before) < 0) continue;
        return i;
    }
    return n;
}

/* -- byte_level: the word cache ------------------------------------------------------------ */

/* A word -> ids table kept in C, so a word is found by its characters without a str hash or
 * compare: `WordCache`'s rules (words under cached_chars characters, cleared when it holds
 * cache_size). A key is a str's code units; its kind and length are part of it. A slot holds
 * the key's first 8 bytes and, for a key that fits there and gives one id, that id: most of a
 * text's words are found in their slot alone. Longer keys and longer id lists go to a record in
 * the arena (n_ids, the whole key, the ids). Read and written only with the GIL held, and no
 * pointer into it is kept across a call that may release the GIL. */
typedef struct CacheSlot {
    uint64_t head; /* the key's first 8 bytes, zero-padded */
    uint32_t meta; /* 0: empty; else 1 | INLINE | kind << 2 | size << 5 | hash tag << 16 */
    uint32_t value; /* INLINE: the id; else the record's offset in the arena */
} CacheSlot;

#define SLOT_INLINE 2u
#define MAX_KEY_BYTES 2047 /* a key's size fits 11 bits of `meta` */

/* The first (up to) 8 bytes of p[0..n), zero-padded, and the key's hash. */
static inline uint64_t key_hash(const uint8_t *p, size_t n, uint64_t *head) {
    uint64_t h = 0;
    if (n >= 8) {
        memcpy(&h, p, 8);
    } else {
        for (size_t i = 0; i < n; i++) h |= (uint64_t)p[i] << (8 * i);
    }
    *head = h;
    return n <= 8 ? mix64((h ^ (uint64_t)n * 0x9E3779B97F4A7C15ULL) * 0xC4CEB9FE1A85EC53ULL)
                  : hash_bytes(p, (Py_ssize_t)n);
}

static inline uint32_t slot_meta(uint64_t h, int kind, size_t size) {
    return 1u | (uint32_t)kind << 2 | (uint32_t)size << 5 | (uint32_t)(h >> 48) << 16;
}

/* The ids of the cached key p[0..size) of `kind` (*n_ids of them), or NULL. */
static const int32_t *cache_find(const Merger *m, uint64_t h, uint64_t head, int kind, const uint8_t *p, size_t size,
                                 Py_ssize_t *n_ids) {
    if (!m->cache_slots) return NULL;
    uint32_t want = slot_meta(h, kind, size);
    for (Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)m->cache_mask);; slot = (slot + 1) & m->cache_mask) {
        const CacheSlot *c = &m->cache_slots[slot];
        if (c->meta == 0) return NULL;
        if ((c->meta & ~SLOT_INLINE) != want || c->head != head) continue;
        if (c->meta & SLOT_INLINE) {
            *n_ids = 1;
            return (const int32_t *)&c->value;
        }
        const uint8_t *record = m->arena + c->value;
        if (size > 8 && memcmp(record + 4 + 8, p + 8, size - 8) != 0) continue;
        uint32_t count;
        memcpy(&count, record, 4);
        *n_ids = count;
        return (const int32_t *)(record + 4 + ((size + 3) & ~(size_t)3));
    }
}

static void cache_clear(Merger *m) {
    if (m->cache_slots) memset(m->cache_slots, 0, (size_t)(m->cache_mask + 1) * sizeof(CacheSlot));
    m->cache_used = 0;
    m->arena_len = 0;
}

/* Doubles the slots (or makes the first 4096). -1 with MemoryError set. */
static int cache_grow(Merger *m) {
    Py_ssize_t slots = m->cache_slots ? (m->cache_mask + 1) * 2 : 4096;
    if ((size_t)slots > PY_SSIZE_T_MAX / sizeof(CacheSlot)) return PyErr_NoMemory(), -1;
    CacheSlot *grown = PyMem_Calloc((size_t)slots, sizeof(CacheSlot));
    if (!grown) return PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; m->cache_slots && i <= m->cache_mask; i++) {
        const CacheSlot *c = &m->cache_slots[i];
        if (!c->meta) continue;
        size_t size = c->meta >> 5 & MAX_KEY_BYTES;
        uint64_t head;
        uint64_t h;
        if (size > 8) {
            h = key_hash(m->arena + c->value + 4, size, &head);
        } else {
            uint8_t bytes[8];
            memcpy(bytes, &c->head, 8);
            h = key_hash(bytes, size, &head);
        }
        Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)(slots - 1));
        while (grown[slot].meta) slot = (slot + 1) & (slots - 1);
        grown[slot] = *c;
    }
    PyMem_Free(m->cache_slots);
    m->cache_slots = grown;
    m->cache_mask = slots - 1;
    return 0;
}

/* Remembers the key p[0..size) of `word` -> ids[0..n_ids) (`WordCache.remember`); `h` and
 * `head` are its key_hash. -1 with MemoryError set. */
static int cache_put(Merger *m, PyObject *word, uint64_t h, uint64_t head, const int32_t *ids, Py_ssize_t n_ids) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    int kind = PyUnicode_KIND(word);
    size_t size = (size_t)n * (size_t)kind;
    if (n >= m->cached_chars || size > MAX_KEY_BYTES) return 0;
    if (m->cache_used >= m->cache_size) cache_clear(m);
    if (!m->cache_slots || (m->cache_used + 1) * 2 > m->cache_mask + 1)
        if (cache_grow(m) < 0) return -1;
    CacheSlot c = {head, slot_meta(h, kind, size), 0};
    if (n_ids == 1 && size <= 8) {
        c.meta |= SLOT_INLINE;
        c.value = (uint32_t)ids[0];
    } else {
        size_t at = (m->arena_len + 3u) & ~(size_t)3;
        size_t ids_at = at + 4 + ((size + 3) & ~(size_t)3);
        if ((size_t)n_ids > (UINT32_MAX - ids_at) / sizeof(int32_t)) return 0; /* the arena stays under 4 GB */
        size_t end = ids_at + (size_t)n_ids * sizeof(int32_t);
        if (end > m->arena_cap) {
            size_t cap = m->arena_cap ? m->arena_cap : 1 << 16;
            while (cap < end) cap *= 2;
            if (cap > UINT32_MAX) cap = UINT32_MAX;
            uint8_t *grown = PyMem_Realloc(m->arena, cap);
            if (!grown) return PyErr_NoMemory(), -1;
            m->arena = grown;
            m->arena_cap = cap;
        }
        uint32_t count = (uint32_t)n_ids;
        memcpy(m->arena + at, &count, 4);
        memcpy(m->arena + at + 4, PyUnicode_DATA(word), size);
        memcpy(m->arena + ids_at, ids, (size_t)n_ids * sizeof(int32_t));
        m->arena_len = end;
        c.value = (uint32_t)at;
    }
    Py_ssize_t slot = (Py_ssize_t)(h & (uint64_t)m->cache_mask);
    while (m->cache_slots[slot].meta) slot = (slot + 1) & m->cache_mask;
    m->cache_slots[slot] = c;
    m->cache_used++;
    return 0;
}

/* -- the output buffer -------------------------------------------------------------------- */

typedef struct {
    PyObject **items; /* owned references */
    Py_ssize_t len, cap;
} Out;

static void out_free(Out *o) {
    for (Py_ssize_t i = 0; i < o->len; i++) Py_DECREF(o->items[i]);
    PyMem_Free(o->items);
    memset(o, 0, sizeof(*o));
}

static int out_extend(Out *o, PyObject *list) {
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n > o->cap - o->len) {
        Py_ssize_t cap = o->cap ? o->cap : 64;
        while (cap - o->len < n) {
            if (cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(PyObject *)) return PyErr_NoMemory(), -1;
            cap *= 2;
        }
        PyObject **items = PyMem_Realloc(o->items, (size_t)cap * sizeof(PyObject *));
        if (!items) return PyErr_NoMemory(), -1;
        o->items = items;
        o->cap = cap;
    }
    for (Py_ssize_t i = 0; i < n; i++) o->items[o->len++] = Py_NewRef(PyList_GET_ITEM(list, i));
    return 0;
}

/* Appends the int objects of ids[0..n). */
static int out_extend_ids(Out *o, const Merger *m, const int32_t *ids, Py_ssize_t n) {
    if (n > o->cap - o->len) {
        Py_ssize_t cap = o->cap ? o->cap : 64;
        while (cap - o->len < n) {
            if (cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(PyObject *)) return PyErr_NoMemory(), -1;
            cap *= 2;
        }
        PyObject **items = PyMem_Realloc(o->items, (size_t)cap * sizeof(PyObject *));
        if (!items) return PyErr_NoMemory(), -1;
        o->items = items;
        o->cap = cap;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        PyObject *obj = id >= 0 && id < m->size && m->id_objects[id] ? Py_NewRef(m->id_objects[id])
                                                                      : PyLong_FromLong(id);
        if (!obj) return -1;
        o->items[o->len++] = obj;
    }
    return 0;
}

static PyObject *out_list(Out *o) {
    PyObject *list = PyList_New(o->len);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < o->len; i++) PyList_SET_ITEM(list, i, o->items[i]); /* steals */
    o->len = 0;
    return list;
}

/* -- the word loop -------------------------------------------------------------------------- */

/* `WordCache.remember`. */
static int remember(const Merger *m, PyObject *cache, PyObject *word, PyObject *ids) {
    if (PyUnicode_GET_LENGTH(word) >= m->cached_chars) return 0;
    if (PyDict_GET_SIZE(cache) >= m->cache_size) PyDict_Clear(cache);
    return PyDict_SetItem(cache, word, ids);
}

/* `BPE._word_ids` of word[start..end) (no cut, no cache; the ignore_merges lookup is the
 * caller's): a new reference to its ids, Py_None (borrowed) when the pure loop would raise,
 * NULL on error. `sym` has room for 4 symbols per character. */
static PyObject *range_ids(const Merger *m, PyObject *word, Py_ssize_t start, Py_ssize_t end, int32_t *sym) {
    Py_ssize_t count = word_symbols(m, PyUnicode_KIND(word), PyUnicode_DATA(word), start, end, sym);
    if (count < 0) return Py_None;
    Py_ssize_t left = merge_symbols(m, sym, count);
    if (left < 0) return NULL;
    if (m->block)
        for (Py_ssize_t i = 0; i < left; i++)
            if (sym[i] < 0) return write_blocked(m, word, start, end, sym, left);
    return ids_list(m, sym, left);
}

/* The ids of word[start..end), through the cache under that chunk (`BPE._cached_ids`): a new
 * reference to a list the caller must not change, Py_None (borrowed) or NULL as `range_ids`. */
static PyObject *chunk_ids(const Merger *m, PyObject *cache, PyObject *word, Py_ssize_t start, Py_ssize_t end,
                           int32_t *sym) {
    PyObject *chunk = PyUnicode_Substring(word, start, end);
    if (!chunk) return NULL;
    PyObject *ids = PyDict_GetItemWithError(cache, chunk);
    if (ids) {
        Py_DECREF(chunk);
        return Py_NewRef(ids);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(chunk);
        return NULL;
    }
    ids = range_ids(m, word, start, end, sym);
    if (ids && ids != Py_None && remember(m, cache, chunk, ids) < 0) Py_CLEAR(ids);
    Py_DECREF(chunk);
    return ids;
}

/* A symbol buffer for a word of n characters (4 symbols each): `stack` when it fits. */
static int32_t *symbol_buffer(Py_ssize_t n, int32_t *stack, Py_ssize_t stack_size) {
    if (n <= stack_size / 4) return stack;
    if ((size_t)n > PY_SSIZE_T_MAX / 4 / sizeof(int32_t)) {
        PyErr_NoMemory();
        return NULL;
    }
    int32_t *sym = PyMem_Malloc((size_t)n * 4 * sizeof(int32_t));
    if (!sym) PyErr_NoMemory();
    return sym;
}

/* `BPE.tokenize` of one word not in the cache: a new reference to its ids (remembered), or
 * Py_None (borrowed, not counted) when the word is left to the pure loop, or NULL on error. */
static PyObject *new_word(const Merger *m, PyObject *word, PyObject *cache) {
    if (m->byte_level) {
        PyObject *ids = byte_word_ids(m, word);
        if (ids && ids != Py_None && remember(m, cache, word, ids) < 0) Py_CLEAR(ids);
        return ids;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n == 0 || n >= INT32_MAX / 4) return Py_None;
    if (m->ignore_merges) {
        PyObject *whole = PyDict_GetItemWithError(m->vocab, word);
        if (whole) {
            PyObject *ids = PyList_New(1);
            if (!ids) return NULL;
            PyList_SET_ITEM(ids, 0, Py_NewRef(whole));
            if (remember(m, cache, word, ids) < 0) Py_CLEAR(ids);
            return ids;
        }
        if (PyErr_Occurred()) return NULL;
    }
    int32_t stack[4 * STACK_SYMBOLS];
    int32_t *sym = symbol_buffer(n, stack, 4 * STACK_SYMBOLS);
    if (!sym) return NULL;
    PyObject *ids = NULL;
    if (n > m->cut_from && m->mark >= 0) {
        /* `BPE._cut`: a chunk starts at each mark whose preceding character is an entry, not unsafe */
        int kind = PyUnicode_KIND(word);
        const void *data = PyUnicode_DATA(word);
        Py_ssize_t start = 0;
        int cut = 0;
        Out parts = {NULL, 0, 0};
        for (Py_ssize_t i = 1; i <= n; i++) {
            if (i < n) {
                if ((int32_t)PyUnicode_READ(kind, data, i) != m->mark) continue;
                uint64_t before = (uint64_t)PyUnicode_READ(kind, data, i - 1) + 1;
                if (intmap_get(&m->unsafe, before) >= 0 || intmap_get(&m->chars, before) < 0) continue;
            } else if (!cut) {
                break; /* one chunk: the word merges whole */
            }
            cut = 1;
            PyObject *part = chunk_ids(m, cache, word, start, i, sym);
            if (part == Py_None) { /* the pure loop raises on this chunk: it takes the whole word */
                out_free(&parts);
                ids = Py_None;
                goto done;
            }
            if (!part || out_extend(&parts, part) < 0) {
                Py_XDECREF(part);
                out_free(&parts);
                goto done;
            }
            Py_DECREF(part);
            start = i;
        }
        if (cut) {
            ids = out_list(&parts);
            out_free(&parts);
            if (ids && remember(m, cache, word, ids) < 0) Py_CLEAR(ids);
            goto done;
        }
    }
    ids = range_ids(m, word, 0, n, sym);
    if (ids && ids != Py_None && remember(m, cache, word, ids) < 0) Py_CLEAR(ids);
done:
    if (sym != stack) PyMem_Free(sym);
    return ids;
}

/* byte_level `tokenize_all`: each word found in the C word cache by its characters, or merged
 * and remembered there; `fallback` (the pure loop) takes what the kernel leaves. */
static PyObject *byte_tokenize_all(Merger *self, PyObject *words, PyObject *fallback) {
    Out out = {NULL, 0, 0};
    int32_t stack[4 * STACK_SYMBOLS];
    Py_ssize_t guess = PyList_GET_SIZE(words) + PyList_GET_SIZE(words) / 8 + 16; /* a word is a token or more */
    if (guess < PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(PyObject *)) {
        out.items = PyMem_Malloc((size_t)guess * sizeof(PyObject *));
        if (!out.items) return PyErr_NoMemory();
        out.cap = guess;
    }
    /* the list may change under a fallback call: its length is read on every turn */
    for (Py_ssize_t w = 0; w < PyList_GET_SIZE(words); w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (PyUnicode_CheckExact(word)) {
            Py_ssize_t n = PyUnicode_GET_LENGTH(word);
            int kind = PyUnicode_KIND(word);
            size_t size = (size_t)n * (size_t)kind;
            uint64_t h = 0, head = 0;
            int cached = n > 0 && n < self->cached_chars && size <= MAX_KEY_BYTES;
            if (cached) {
                Py_ssize_t n_ids;
                h = key_hash(PyUnicode_DATA(word), size, &head);
                const int32_t *hit = cache_find(self, h, head, kind, PyUnicode_DATA(word), size, &n_ids);
                if (hit) {
                    if (out_extend_ids(&out, self, hit, n_ids) < 0) goto error;
                    continue;
                }
            }
            int32_t *ids;
            Py_ssize_t count = byte_word(self, word, stack, &ids);
            if (count >= 0) {
                int failed = (cached && cache_put(self, word, h, head, ids, count) < 0) ||
                             out_extend_ids(&out, self, ids, count) < 0;
                if (ids != stack) PyMem_Free(ids);
                if (failed) goto error;
                continue;
            }
            if (ids != stack) PyMem_Free(ids);
            if (count == -1) goto error;
        }
        Py_INCREF(word);
        PyObject *ids = PyObject_CallOneArg(fallback, word);
        Py_DECREF(word);
        if (!ids) goto error;
        if (!PyList_Check(ids)) {
            Py_DECREF(ids);
            PyErr_SetString(PyExc_TypeError, "a word's ids must be a list");
            goto error;
        }
        int failed = out_extend(&out, ids);
        Py_DECREF(ids);
        if (failed) goto error;
    }
    PyObject *result = out_list(&out);
    out_free(&out);
    return result;
error:
    out_free(&out);
    return NULL;
}

/* tokenize_all(words, cache, fallback) -> list[int] */
static PyObject *Merger_tokenize_all(Merger *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyList_Check(args[0]) || !PyDict_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "tokenize_all(words: list, cache: dict, fallback)");
        return NULL;
    }
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Merger is not initialised");
        return NULL;
    }
    PyObject *words = args[0], *cache = args[1], *fallback = args[2];
    if (self->byte_level) return byte_tokenize_all(self, words, fallback);
    Out out = {NULL, 0, 0};
    /* the list may change under a fallback call: its length is read on every turn */
    for (Py_ssize_t w = 0; w < PyList_GET_SIZE(words); w++) {
        PyObject *word = Py_NewRef(PyList_GET_ITEM(words, w));
        PyObject *ids = NULL;
        if (!PyUnicode_CheckExact(word)) {
            ids = PyObject_CallOneArg(fallback, word);
        } else {
            ids = PyDict_GetItemWithError(cache, word);
            if (ids) {
                Py_INCREF(ids);
            } else if (!PyErr_Occurred()) {
                ids = new_word(self, word, cache);
                if (ids == Py_None) ids = PyObject_CallOneArg(fallback, word);
            }
        }
        Py_DECREF(word);
        if (!ids) goto error;
        if (!PyList_Check(ids)) {
            Py_DECREF(ids);
            PyErr_SetString(PyExc_TypeError, "a word's ids must be a list");
            goto error;
        }
        int failed = out_extend(&out, ids);
        Py_DECREF(ids);
        if (failed) goto error;
    }
    PyObject *result = out_list(&out);
    out_free(&out);
    return result;
error:
    out_free(&out);
    return NULL;
}

/* word(word) -> list[int] | None: `BPE._word_ids` (no cut, no cache), None when left to the pure loop. */
static PyObject *Merger_word(Merger *self, PyObject *word) {
    if (!PyUnicode_Check(word)) {
        PyErr_SetString(PyExc_TypeError, "word must be str");
        return NULL;
    }
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Merger is not initialised");
        return NULL;
    }
    if (self->byte_level) {
        PyObject *ids = byte_word_ids(self, word);
        if (ids == Py_None) Py_INCREF(ids);
        return ids;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    if (n == 0 || n >= INT32_MAX / 4) Py_RETURN_NONE;
    if (self->ignore_merges) {
        PyObject *whole = PyDict_GetItemWithError(self->vocab, word);
        if (whole) return Py_BuildValue("[O]", whole);
        if (PyErr_Occurred()) return NULL;
    }
    int32_t stack[4 * STACK_SYMBOLS];
    int32_t *sym = symbol_buffer(n, stack, 4 * STACK_SYMBOLS);
    if (!sym) return NULL;
    PyObject *ids = range_ids(self, word, 0, n, sym);
    if (ids == Py_None) Py_INCREF(ids);
    if (sym != stack) PyMem_Free(sym);
    return ids;
}

/* merge(ids, use_scan) -> list[int]: the merge loop alone over initial symbol ids (for tests:
 * use_scan false runs the heap whatever the length). */
static PyObject *Merger_merge(Merger *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "merge(ids: list, use_scan: bool)");
        return NULL;
    }
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Merger is not initialised");
        return NULL;
    }
    if (self->byte_level) {
        PyErr_SetString(PyExc_TypeError, "merge() takes symbol ids; a byte_level Merger merges bytes (word())");
        return NULL;
    }
    int use_scan = PyObject_IsTrue(args[1]);
    if (use_scan < 0) return NULL;
    PyObject *list = args[0];
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n >= INT32_MAX || (size_t)n > PY_SSIZE_T_MAX / sizeof(int32_t) - 1) return PyErr_NoMemory();
    int32_t *sym = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!sym) return PyErr_NoMemory();
    PyObject *ids = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        sym[i] = read_id(PyList_GET_ITEM(list, i), self->size);
        if (sym[i] < 0) goto done;
    }
    Py_ssize_t left;
    if (use_scan && n <= self->scan_limit) {
        left = merge_scan(self, sym, n);
    } else {
        HeapScratch s;
        if (scratch_alloc(&s, n ? n : 1) < 0) {
            PyErr_NoMemory();
            goto done;
        }
        left = merge_heap(self, sym, n, &s);
        scratch_free(&s);
    }
    ids = ids_list(self, sym, left);
done:
    PyMem_Free(sym);
    return ids;
}

static PyObject *Merger_batch_covered(Merger *self, PyObject *unused) {
    return PyBool_FromLong(api_covers((PyObject *)self));
}

static PyObject *Merger_reduce(Merger *self, PyObject *unused) {
    PyErr_SetString(PyExc_TypeError, "a Merger is not picklable: its owner rebuilds it after unpickling");
    return NULL;
}

static PyMethodDef Merger_methods[] = {
    {"tokenize_all", (PyCFunction)(void (*)(void))Merger_tokenize_all, METH_FASTCALL,
     "tokenize_all(words, cache, fallback) -> list[int]: the ids of each word, concatenated"},
    {"word", (PyCFunction)Merger_word, METH_O, "word(word) -> list[int] | None: one word merged, uncached"},
    {"batch_covered", (PyCFunction)Merger_batch_covered, METH_NOARGS,
     "batch_covered() -> bool: whether the capsule's entries (the batch kernel's) decide this Merger's words"},
    {"merge", (PyCFunction)(void (*)(void))Merger_merge, METH_FASTCALL,
     "merge(ids, use_scan) -> list[int]: the merge loop over initial symbol ids"},
    {"__reduce__", (PyCFunction)Merger_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MergerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.bpe_merge.Merger",
    .tp_doc = "One BPE model's characters and pair ranks; tokenize_all() runs the word loop.",
    .tp_basicsize = sizeof(Merger),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Merger_init,
    .tp_dealloc = (destructor)Merger_dealloc,
    .tp_methods = Merger_methods,
};


/* -- the cut mark ------------------------------------------------------------------------ */

/* cut_mark(vocab) -> (mark, unsafe): polytok/models/_bpe_cut.py's `cut_mark`, by its rule: the
 * most common first character of the keys of more than one character (a tie goes to the one
 * seen first, as `Counter.most_common`), "" unless that character is a key itself, and the
 * frozenset of the characters before it inside a key. Counts are per code point in two
 * zeroed tables (only the pages of the code points met are touched). */
static PyObject *cut_mark(PyObject *module, PyObject *vocab) {
    if (!PyDict_Check(vocab)) {
        PyErr_SetString(PyExc_TypeError, "vocab must be a dict");
        return NULL;
    }
    const Py_ssize_t n_cps = 0x110000;
    uint32_t *counts = PyMem_RawCalloc((size_t)n_cps, sizeof(uint32_t));
    uint32_t *seen = PyMem_RawCalloc((size_t)n_cps, sizeof(uint32_t)); /* 1 + order of first sight */
    if (!counts || !seen) {
        PyMem_RawFree(counts);
        PyMem_RawFree(seen);
        return PyErr_NoMemory();
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    uint32_t order = 0, best_count = 0;
    Py_UCS4 best = 0;
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        if (!PyUnicode_Check(key)) {
            PyMem_RawFree(counts);
            PyMem_RawFree(seen);
            PyErr_SetString(PyExc_TypeError, "pieces must be str");
            return NULL;
        }
        if (PyUnicode_GET_LENGTH(key) < 2) continue;
        Py_UCS4 c = PyUnicode_READ_CHAR(key, 0);
        if (!seen[c]) seen[c] = ++order;
        uint32_t count = ++counts[c];
        if (count > best_count || (count == best_count && seen[c] < seen[best])) {
            best_count = count;
            best = c;
        }
    }
    PyMem_RawFree(counts);
    PyMem_RawFree(seen);
    PyObject *mark = NULL, *unsafe = NULL, *out = NULL;
    if (best_count) {
        mark = PyUnicode_FromOrdinal((int)best);
        if (!mark) return NULL;
        int found = PyDict_Contains(vocab, mark);
        if (found < 0) goto done;
        if (!found) Py_CLEAR(mark);
    }
    unsafe = PyFrozenSet_New(NULL);
    if (!unsafe) goto done;
    if (!mark) {
        out = Py_BuildValue("(sO)", "", unsafe);
        goto done;
    }
    pos = 0;
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(key);
        int kind = PyUnicode_KIND(key);
        const void *data = PyUnicode_DATA(key);
        for (Py_ssize_t i = 1; i < n; i++) {
            if (PyUnicode_READ(kind, data, i) != best) continue;
            PyObject *before = PyUnicode_FromOrdinal((int)PyUnicode_READ(kind, data, i - 1));
            if (!before || PySet_Add(unsafe, before) < 0) {
                Py_XDECREF(before);
                goto done;
            }
            Py_DECREF(before);
        }
    }
    out = PyTuple_Pack(2, mark, unsafe);
done:
    Py_XDECREF(mark);
    Py_XDECREF(unsafe);
    return out;
}

static PyMethodDef module_methods[] = {
    {"cut_mark", (PyCFunction)cut_mark, METH_O,
     "cut_mark(vocab) -> (mark, unsafe): polytok.models._bpe_cut.cut_mark, compiled"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef bpe_merge_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "polytok._kernels.bpe_merge",
    .m_doc = "The BPE model's word loop (polytok.models.bpe), compiled.",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_bpe_merge(void) {
    fill_alphabet();
    if (PyType_Ready(&MergerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&bpe_merge_module);
    if (!m) return NULL;
    if (PyModule_AddObjectRef(m, "Merger", (PyObject *)&MergerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    static BpeMergeAPI api;
    api.type = &MergerType;
    api.covers = api_covers;
    api.word_ids = api_word_ids;
    api.chunk_end = api_chunk_end;
    PyObject *capsule = PyCapsule_New(&api, BPE_MERGE_API_NAME, NULL);
    if (!capsule || PyModule_AddObjectRef(m, "_C_API", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    Py_DECREF(capsule);
    return m;
}

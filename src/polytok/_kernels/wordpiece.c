/* WordPiece's greedy longest-match-first over a word, and the word cache around it.
 *
 * The compiled half of polytok.models.wordpiece.WordPiece (which defines the semantics).
 * The algorithm is HF tokenizers 0.23.3 tokenizers/src/models/wordpiece/mod.rs
 * (WordPiece::tokenize) and llama.cpp's llm_tokenizer_wpm_session::tokenize
 * (src/llama-vocab.cpp), which the pure stage serves with an empty prefix and no
 * length limit: from the start of what is left of the word, the longest vocabulary
 * entry wins (written with the continuing-subword prefix unless it starts the word);
 * if nothing matches at some point, the whole word is the unk token.
 *
 * The candidates are tried from the longest down, as the pure loop does, but without making
 * a str for each: the vocabulary sits in one open-addressing table keyed by a hash of code
 * points, twice for an entry that starts with the continuing-subword prefix (once as it is,
 * once without the prefix, in a separately seeded view), and the hashes of every candidate
 * at one start are computed forward in one pass over the word.
 *
 * Also two pre-tokenizer cuts: HF BertPreTokenizer's (BertSplit), and the last step of the
 * llama.cpp WordPiece pre-tokenizer (split the translated text at NUL and put the word prefix
 * in front of each non-empty word), each in one pass.
 *
 * Table and BertSplit are read-only once built, so several threads may share them.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* One vocabulary entry as the table sees it: the entry itself, how many of its code points
 * come before the compared part (0, or the prefix length for the continuing-subword view),
 * and its id. The hash table's slots hold a 32-bit tag of the hash and the entry's index. */
typedef struct {
    PyObject *key;     /* borrowed from Table.keys */
    Py_ssize_t skip;
    int64_t id;
} Entry;

typedef struct {
    uint32_t tag;
    int32_t entry;     /* -1: empty slot */
} Slot;

typedef struct {
    PyObject_HEAD
    PyObject *keys;       /* a list holding every entry, so the borrowed pointers stay valid */
    Entry *entries;
    Py_ssize_t n_entries;
    Slot *slots;
    Py_ssize_t mask;      /* slots - 1 (a power of two) */
    int bits;
    Py_ssize_t longest[2];  /* the longest candidate worth a lookup: word-initial, continuing */
    int has_prefix;
    Py_ssize_t max_chars;
    int64_t unk_id;       /* -1: the unk token is missing (the pure path raises) */
} Table;

/* The two views of the vocabulary: an entry as it is (word-initial), and an entry that starts
 * with the prefix, without it (continuing). Each view seeds the hash differently. */
static const uint64_t SEED[2] = {UINT64_C(0xCBF29CE484222325), UINT64_C(0x84222325CBF29CE4)};

static inline uint64_t hash_step(uint64_t h, Py_UCS4 cp) {
    return (h ^ (uint64_t)cp) * UINT64_C(0x100000001B3);
}

static inline Py_ssize_t slot_of(const Table *t, uint64_t hash) {
    return (Py_ssize_t)(((hash ^ (hash >> 29)) * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - t->bits));
}

/* The id of the entry whose compared part is word[start:end] and has hash `h`, or -1. */
static int64_t lookup(const Table *t, uint64_t h, int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    Py_ssize_t i = slot_of(t, h), len = end - start;
    uint32_t tag = (uint32_t)(h >> 32);
    for (;;) {
        Slot s = t->slots[i];
        if (s.entry < 0) return -1;
        if (s.tag == tag) {
            const Entry *e = &t->entries[s.entry];
            if (PyUnicode_GET_LENGTH(e->key) - e->skip == len) {
                int kkind = PyUnicode_KIND(e->key);
                const void *kdata = PyUnicode_DATA(e->key);
                Py_ssize_t j = 0;
                while (j < len && PyUnicode_READ(kkind, kdata, e->skip + j) == PyUnicode_READ(kind, data, start + j))
                    j++;
                if (j == len) return e->id;
            }
        }
        i = (i + 1) & t->mask;
    }
}

static void insert(Table *t, PyObject *key, Py_ssize_t skip, int view, int64_t id) {
    int kind = PyUnicode_KIND(key);
    const void *data = PyUnicode_DATA(key);
    Py_ssize_t n = PyUnicode_GET_LENGTH(key);
    uint64_t h = SEED[view];
    for (Py_ssize_t j = skip; j < n; j++) h = hash_step(h, PyUnicode_READ(kind, data, j));
    Py_ssize_t i = slot_of(t, h);
    while (t->slots[i].entry >= 0) i = (i + 1) & t->mask;  /* the dict's keys are distinct: no duplicate */
    int32_t at = (int32_t)t->n_entries++;
    t->entries[at] = (Entry){key, skip, id};
    t->slots[i] = (Slot){(uint32_t)(h >> 32), at};
    if (n - skip > t->longest[view]) t->longest[view] = n - skip;
}

static void Table_dealloc(Table *self) {
    PyMem_Free(self->slots);
    PyMem_Free(self->entries);
    Py_XDECREF(self->keys);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Whether `key` starts with `prefix` and is longer. */
static int continues(PyObject *key, PyObject *prefix) {
    Py_ssize_t plen = PyUnicode_GET_LENGTH(prefix);
    if (PyUnicode_GET_LENGTH(key) <= plen) return 0;
    for (Py_ssize_t j = 0; j < plen; j++)
        if (PyUnicode_READ_CHAR(key, j) != PyUnicode_READ_CHAR(prefix, j)) return 0;
    return 1;
}

/* Table(vocab: dict[str, int], prefix: str, max_chars: int, unk_id: int) */
static PyObject *Table_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"vocab", "prefix", "max_chars", "unk_id", NULL};
    PyObject *vocab, *prefix;
    Py_ssize_t max_chars;
    long long unk_id;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!UnL", names, &PyDict_Type, &vocab, &prefix, &max_chars,
                                     &unk_id))
        return NULL;
    Py_ssize_t plen = PyUnicode_GET_LENGTH(prefix), entries = 0, pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || !PyLong_Check(value)) {  /* exact: no Python code runs below */
            PyErr_SetString(PyExc_TypeError, "vocab: expected str keys and int ids");
            return NULL;
        }
        entries += 1 + (plen > 0 && continues(key, prefix));
    }
    if (entries > INT32_MAX / 2) return PyErr_NoMemory();
    int bits = 4;
    while (((Py_ssize_t)1 << bits) < entries + entries / 2 + 1) bits++;  /* at most 2/3 full */
    Py_ssize_t slots = (Py_ssize_t)1 << bits;

    Table *t = (Table *)type->tp_alloc(type, 0);
    if (t == NULL) return NULL;
    t->keys = PyDict_Keys(vocab);
    t->slots = PyMem_Malloc((size_t)slots * sizeof(Slot));
    t->entries = PyMem_Malloc((size_t)(entries ? entries : 1) * sizeof(Entry));
    if (t->keys == NULL || t->slots == NULL || t->entries == NULL) {
        Py_DECREF(t);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < slots; i++) t->slots[i].entry = -1;
    t->mask = slots - 1;
    t->bits = bits;
    t->has_prefix = plen > 0;
    t->max_chars = max_chars;
    t->unk_id = unk_id < 0 ? -1 : (int64_t)unk_id;
    for (Py_ssize_t k = 0, n = PyList_GET_SIZE(t->keys); k < n; k++) {
        key = PyList_GET_ITEM(t->keys, k);
        value = PyDict_GetItemWithError(vocab, key);
        long long id = value == NULL ? -1 : PyLong_AsLongLong(value);
        if (id == -1 && PyErr_Occurred()) {
            Py_DECREF(t);
            return NULL;
        }
        if (id < 0) {
            PyErr_SetString(PyExc_ValueError, "vocab: ids must not be negative");
            Py_DECREF(t);
            return NULL;
        }
        if (PyUnicode_GET_LENGTH(key) == 0) continue;  /* the empty entry never matches */
        insert(t, key, 0, 0, (int64_t)id);
        if (plen > 0 && continues(key, prefix)) insert(t, key, plen, 1, (int64_t)id);
    }
    return (PyObject *)t;
}

/* A growable buffer of ids, starting on the stack. */
typedef struct {
    int64_t *ids;
    Py_ssize_t len, cap;
    int64_t local[64];
} IdBuf;

static void buf_init(IdBuf *b) {
    b->ids = b->local;
    b->len = 0;
    b->cap = 64;
}

static void buf_free(IdBuf *b) {
    if (b->ids != b->local) PyMem_Free(b->ids);
}

static int buf_push(IdBuf *b, int64_t id) {
    if (b->len == b->cap) {
        if (b->cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(int64_t)) {
            PyErr_NoMemory();
            return -1;
        }
        Py_ssize_t cap = b->cap * 2;
        int64_t *grown = PyMem_Malloc((size_t)cap * sizeof(int64_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(grown, b->ids, (size_t)b->len * sizeof(int64_t));
        if (b->ids != b->local) PyMem_Free(b->ids);
        b->ids = grown;
        b->cap = cap;
    }
    b->ids[b->len++] = id;
    return 0;
}

/* The greedy split of `word` into `b`: 0 done, 1 the word is one unk (b left empty), -1 error.
 * At each start, the hashes of every candidate are computed forward in one pass, then the
 * candidates are looked up from the longest down, as the pure loop tries them. */
static int greedy(const Table *t, PyObject *word, IdBuf *b) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(word);
    b->len = 0;
    if (n > t->max_chars) return 1;
    int kind = PyUnicode_KIND(word);
    const void *data = PyUnicode_DATA(word);
    uint64_t local[128];
    uint64_t *hashes = local;
    int status = 1;
    Py_ssize_t start = 0;
    while (start < n) {
        int view = start > 0 && t->has_prefix;  /* an empty prefix: prefix + candidate is the candidate */
        Py_ssize_t room = t->longest[view];
        Py_ssize_t limit = n - start < room ? n : start + room;
        Py_ssize_t span = limit - start;
        if (span > 128 && hashes == local) {
            Py_ssize_t longest = t->longest[0] > t->longest[1] ? t->longest[0] : t->longest[1];
            Py_ssize_t size = n < longest ? n : longest;
            hashes = PyMem_Malloc((size_t)size * sizeof(uint64_t));
            if (hashes == NULL) {
                PyErr_NoMemory();
                status = -1;
                goto done;
            }
        }
        uint64_t h = SEED[view];
        for (Py_ssize_t j = 0; j < span; j++) hashes[j] = h = hash_step(h, PyUnicode_READ(kind, data, start + j));
        Py_ssize_t end = limit;
        int64_t found = -1;
        for (; end > start; end--) {
            found = lookup(t, hashes[end - start - 1], kind, data, start, end);
            if (found >= 0) break;
        }
        if (found < 0) {
            b->len = 0;
            goto done;  /* status 1: one unk */
        }
        if (buf_push(b, found) < 0) {
            status = -1;
            goto done;
        }
        start = end;
    }
    status = 0;
done:
    if (hashes != local) PyMem_Free(hashes);
    return status;
}

/* The ids of `word` as a new list; Py_None (a new reference) when the unk token is needed and missing. */
static PyObject *word_ids(const Table *t, PyObject *word, IdBuf *b) {
    int found = greedy(t, word, b);
    if (found < 0) return NULL;
    if (found == 1) {
        if (t->unk_id < 0) Py_RETURN_NONE;
        b->len = 0;
        b->ids[b->len++] = t->unk_id;  /* cap >= 64 */
    }
    PyObject *list = PyList_New(b->len);
    if (list == NULL) return NULL;
    for (Py_ssize_t i = 0; i < b->len; i++) {
        PyObject *id = PyLong_FromLongLong(b->ids[i]);
        if (id == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, id);
    }
    return list;
}

/* Table.tokenize(word) -> list[int] | None (None: the pure path must run, e.g. to raise). */
static PyObject *Table_tokenize(Table *self, PyObject *word) {
    if (!PyUnicode_Check(word)) {
        PyErr_SetString(PyExc_TypeError, "expected a str");
        return NULL;
    }
    IdBuf b;
    buf_init(&b);
    PyObject *out = word_ids(self, word, &b);
    buf_free(&b);
    return out;
}

/* Table.tokenize_words(words: list[str], cache: dict, limit: int, cached_chars: int, flat: bool)
 *
 * flat: every word's ids concatenated in one new list; else one list per word (cached lists
 * are shared, not copied, as the pure `WordCache.each` hands them out). New words of fewer
 * than `cached_chars` characters go into `cache`, which is cleared first when it holds
 * `limit` words (the rule of polytok.models._cache.WordCache.remember). None: the pure path
 * must run (a cache value that is not a list, or a missing unk token).
 */
static PyObject *Table_tokenize_words(Table *self, PyObject *args) {
    PyObject *words, *cache;
    Py_ssize_t limit, cached_chars;
    int flat;
    if (!PyArg_ParseTuple(args, "O!O!nnp", &PyList_Type, &words, &PyDict_Type, &cache, &limit, &cached_chars, &flat))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(words);
    PyObject *out = PyList_New(flat ? 0 : n);
    if (out == NULL) return NULL;
    IdBuf b;
    buf_init(&b);
    for (Py_ssize_t w = 0; w < PyList_GET_SIZE(words) && w < n; w++) {
        PyObject *word = PyList_GET_ITEM(words, w);
        if (!PyUnicode_Check(word)) {
            PyErr_SetString(PyExc_TypeError, "expected a list of str");
            goto fail;
        }
        Py_INCREF(word);
        PyObject *ids = PyDict_GetItemWithError(cache, word);  /* borrowed */
        if (ids != NULL) {
            Py_INCREF(ids);
        } else {
            if (PyErr_Occurred()) {
                Py_DECREF(word);
                goto fail;
            }
            ids = word_ids(self, word, &b);
            if (ids == NULL || ids == Py_None) {
                Py_DECREF(word);
                if (ids == NULL) goto fail;
                Py_DECREF(ids);
                goto fallback;
            }
            if (PyUnicode_GET_LENGTH(word) < cached_chars) {
                if (PyDict_GET_SIZE(cache) >= limit) PyDict_Clear(cache);
                if (PyDict_SetItem(cache, word, ids) < 0) {
                    Py_DECREF(ids);
                    Py_DECREF(word);
                    goto fail;
                }
            }
        }
        Py_DECREF(word);
        if (!PyList_Check(ids)) {
            Py_DECREF(ids);
            goto fallback;
        }
        if (flat) {
            Py_ssize_t m = PyList_GET_SIZE(ids);
            int bad = 0;
            if (m == 1) {
                bad = PyList_Append(out, PyList_GET_ITEM(ids, 0)) < 0;
            } else if (m > 0) {
                Py_ssize_t at = PyList_GET_SIZE(out);
                bad = PyList_SetSlice(out, at, at, ids) < 0;
            }
            Py_DECREF(ids);
            if (bad) goto fail;
        } else {
            PyList_SET_ITEM(out, w, ids);
        }
    }
    if (!flat && PyList_GET_SIZE(words) != n) goto fallback;  /* the list changed under us */
    buf_free(&b);
    return out;
fallback:
    buf_free(&b);
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    buf_free(&b);
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef Table_methods[] = {
    {"tokenize", (PyCFunction)Table_tokenize, METH_O, "The ids of one word (a new list), or None."},
    {"tokenize_words", (PyCFunction)Table_tokenize_words, METH_VARARGS,
     "The ids of each word through the word cache, concatenated or one list per word; or None."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.wordpiece.Table",
    .tp_basicsize = sizeof(Table),
    .tp_dealloc = (destructor)Table_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A WordPiece vocabulary as a code-point trie: Table(vocab, prefix, max_chars, unk_id).",
    .tp_methods = Table_methods,
    .tp_new = Table_new,
};

/* ---- BertSplit: HF BertPreTokenizer's cut (pre_tokenizers/bert.rs) ----
 * White space ends a word and is dropped; a punctuation character is a word of its own;
 * every other character joins the current word. The two sets come from Python
 * (polytok.text.chars), so this never disagrees with the pure stage's classes. */

enum { JOINS = 0, SPACE = 1, PUNCT = 2 };

typedef struct {
    PyObject_HEAD
    uint8_t bmp[0x10000];  /* the class of each code point below U+10000 */
    Py_UCS4 *astral;       /* sorted astral code points with their classes beside them */
    uint8_t *astral_class;
    Py_ssize_t n_astral;
} BertSplit;

static void BertSplit_dealloc(BertSplit *self) {
    PyMem_Free(self->astral);
    PyMem_Free(self->astral_class);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int cmp_ucs4(const void *a, const void *b) {
    Py_UCS4 x = *(const Py_UCS4 *)a, y = *(const Py_UCS4 *)b;
    return (x > y) - (x < y);
}

/* BertSplit(whitespace: str, punctuation: str): every character of each set, in any order. */
static PyObject *BertSplit_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *names[] = {"whitespace", "punctuation", NULL};
    PyObject *sets[2];
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "UU", names, &sets[0], &sets[1])) return NULL;
    BertSplit *self = (BertSplit *)type->tp_alloc(type, 0);  /* zeroed: every class JOINS */
    if (self == NULL) return NULL;
    Py_ssize_t astral = 0;
    for (int s = 0; s < 2; s++)
        for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(sets[s]); i < n; i++)
            if (PyUnicode_READ_CHAR(sets[s], i) >= 0x10000) astral++;
    self->astral = PyMem_Malloc((size_t)(astral ? astral : 1) * sizeof(Py_UCS4));
    self->astral_class = PyMem_Malloc((size_t)(astral ? astral : 1));
    if (self->astral == NULL || self->astral_class == NULL) {
        Py_DECREF(self);
        return PyErr_NoMemory();
    }
    /* white space first, punctuation over it, as the pure cut tests punctuation first */
    Py_ssize_t k = 0;
    for (int s = 0; s < 2; s++) {
        uint8_t cls = s == 0 ? SPACE : PUNCT;
        for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(sets[s]); i < n; i++) {
            Py_UCS4 c = PyUnicode_READ_CHAR(sets[s], i);
            if (c < 0x10000) self->bmp[c] = cls;
            else self->astral[k++] = c;
        }
    }
    qsort(self->astral, (size_t)k, sizeof(Py_UCS4), cmp_ucs4);
    for (Py_ssize_t i = 0; i < k; i++) {
        self->astral_class[i] = SPACE;
        for (Py_ssize_t j = 0, n = PyUnicode_GET_LENGTH(sets[1]); j < n; j++)
            if (PyUnicode_READ_CHAR(sets[1], j) == self->astral[i]) self->astral_class[i] = PUNCT;
    }
    self->n_astral = k;
    return (PyObject *)self;
}

static inline int bert_class(const BertSplit *t, Py_UCS4 c) {
    if (c < 0x10000) return t->bmp[c];
    Py_ssize_t lo = 0, hi = t->n_astral;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (t->astral[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n_astral && t->astral[lo] == c ? t->astral_class[lo] : JOINS;
}

static int append_slice(PyObject *out, PyObject *text, Py_ssize_t start, Py_ssize_t end) {
    PyObject *word = PyUnicode_Substring(text, start, end);
    if (word == NULL) return -1;
    int status = PyList_Append(out, word);
    Py_DECREF(word);
    return status;
}

/* BertSplit.pieces(text) -> list[str] */
static PyObject *BertSplit_pieces(BertSplit *self, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "expected a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = -1;
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        int cls = bert_class(self, PyUnicode_READ(kind, data, i));
        if (cls == JOINS) {
            if (start < 0) start = i;
            continue;
        }
        if (start >= 0 && append_slice(out, text, start, i) < 0) goto fail;
        start = -1;
        if (cls == PUNCT && append_slice(out, text, i, i + 1) < 0) goto fail;
    }
    if (start >= 0 && append_slice(out, text, start, n) < 0) goto fail;
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef BertSplit_methods[] = {
    {"pieces", (PyCFunction)BertSplit_pieces, METH_O, "The words of a text: punctuation alone, white space dropped."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BertSplitType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.wordpiece.BertSplit",
    .tp_basicsize = sizeof(BertSplit),
    .tp_dealloc = (destructor)BertSplit_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "BertPreTokenizer's cut: BertSplit(whitespace, punctuation).",
    .tp_methods = BertSplit_methods,
    .tp_new = BertSplit_new,
};

/* split_prefixed(text: str, prefix: str) -> list[str]: the non-empty pieces of `text` between
 * NUL characters, each with `prefix` in front (llama.cpp WordPiece's word prefix). */
static PyObject *split_prefixed(PyObject *module, PyObject *args) {
    PyObject *text, *prefix;
    if (!PyArg_ParseTuple(args, "UU", &text, &prefix)) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), plen = PyUnicode_GET_LENGTH(prefix);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    int ascii = PyUnicode_IS_ASCII(text);
    Py_UCS4 pmax = 0;
    for (Py_ssize_t i = 0; i < plen; i++) {
        Py_UCS4 c = PyUnicode_READ_CHAR(prefix, i);
        if (c > pmax) pmax = c;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL) return NULL;
    Py_ssize_t start = 0;
    while (start < n) {
        Py_ssize_t end = start;
        while (end < n && PyUnicode_READ(kind, data, end) != 0) end++;
        if (end > start) {
            Py_ssize_t len = end - start;
            if (len > PY_SSIZE_T_MAX - plen) {
                PyErr_NoMemory();
                goto fail;
            }
            /* the widest character decides the new str's kind, as concatenation does */
            Py_UCS4 wmax = pmax;
            if (ascii) {
                if (wmax < 0x7F) wmax = 0x7F;
            } else {
                for (Py_ssize_t i = start; i < end; i++) {
                    Py_UCS4 c = PyUnicode_READ(kind, data, i);
                    if (c > wmax) wmax = c;
                }
            }
            PyObject *word = PyUnicode_New(plen + len, wmax);
            if (word == NULL) goto fail;
            int wkind = PyUnicode_KIND(word);
            void *wdata = PyUnicode_DATA(word);
            for (Py_ssize_t i = 0; i < plen; i++) PyUnicode_WRITE(wkind, wdata, i, PyUnicode_READ_CHAR(prefix, i));
            if (wkind == kind) {
                memcpy((char *)wdata + plen * wkind, (const char *)data + start * kind, (size_t)(len * kind));
            } else {
                for (Py_ssize_t i = 0; i < len; i++)
                    PyUnicode_WRITE(wkind, wdata, plen + i, PyUnicode_READ(kind, data, start + i));
            }
            int bad = PyList_Append(out, word);
            Py_DECREF(word);
            if (bad < 0) goto fail;
        }
        start = end + 1;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyMethodDef module_methods[] = {
    {"split_prefixed", split_prefixed, METH_VARARGS,
     "The non-empty NUL-separated pieces of a text, each with a prefix in front."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "polytok._kernels.wordpiece",
    "WordPiece's greedy longest match over a code-point trie, with the word cache.", -1, module_methods,
};

PyMODINIT_FUNC PyInit_wordpiece(void) {
    if (PyType_Ready(&TableType) < 0 || PyType_Ready(&BertSplitType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) return NULL;
    Py_INCREF(&TableType);
    if (PyModule_AddObject(m, "Table", (PyObject *)&TableType) < 0) {
        Py_DECREF(&TableType);
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&BertSplitType);
    if (PyModule_AddObject(m, "BertSplit", (PyObject *)&BertSplitType) < 0) {
        Py_DECREF(&BertSplitType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

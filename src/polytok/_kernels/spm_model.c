/* polytok._kernels.spm_model: the pieces of a SentencePiece `.model`, read in C.
 *
 * `read(data)` walks a serialized ModelProto (sentencepiece 0.2.3, src/sentencepiece_model.proto;
 * the wire rules of polytok/formats/protobuf_wire.py) and returns a `Vocab`: per piece its UTF-8
 * text (an offset into `data`, no Python object), its float32 score and its type, plus an index
 * from text to id, the ids that are not NORMAL, and the load checks that concern every piece
 * (polytok/formats/_sentencepiece_build.py `_check_pieces`, `_joins_space_to_text`). The stage
 * kernels build their tables straight from `Vocab.records` (spm_merge `Merger.from_vocab`,
 * unigram `Lattice.from_vocab`), so a load makes no Python string per piece; a `Vocab` is also a
 * read-only sequence of the pieces, making each str on first use.
 *
 * The reader decides only the usual case. It returns None, and the pure reader runs (with its
 * errors, which name the file, key and offset), on anything else: a truncated or corrupt field,
 * a group, a piece message with an unknown or repeated field, a type outside 1..6, text that is
 * not strict UTF-8, a file of 4 GB or more. `Vocab.usual` is false when a per-piece load check
 * would fail or needs the pure reader's care (an empty, long, duplicated or NUL-holding piece, a
 * score that is not finite): the caller then runs the pure path too.
 *
 * The fields of the trainer, normalizer and denormalizer specs are read as the pure reader's
 * `read_message` reads them (`Vocab.spec_fields`); anything it would refuse, or a group, leaves
 * None there and the specs to the pure reader, whose errors name the offset.
 *
 * One pass over the file reads each piece (the usual layout of its message without the general
 * walk), checks its bytes (strict UTF-8, NUL, a "\u2581" after another character: `scan_piece`,
 * eight ASCII bytes at a time) and indexes it, while its bytes are in cache; a first pass only
 * counts the pieces.
 *
 * records: n packed `Record`s (16 bytes each, native order), the layout spm_merge.c and
 * unigram.c read back (SPM_RECORD in those files).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_util.h"

typedef struct {
    uint32_t start; /* of the piece's UTF-8 text in data */
    uint32_t len;   /* bytes */
    float score;
    uint32_t type;  /* 1..6: NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE */
} Record;

enum { NORMAL = 1, UNKNOWN = 2, CONTROL = 3, USER_DEFINED = 4, UNUSED = 5, BYTE = 6 };
#define LONG_PIECE 2000 /* bytes: the pure reader's own check looks at longer pieces */

typedef struct {
    PyObject_HEAD
    PyObject *data;    /* bytes */
    PyObject *records; /* bytes: n Records */
    PyObject *types;   /* bytes: n types */
    PyObject *odd;     /* list[int]: the ids that are not NORMAL */
    PyObject *specs;   /* list[(field number, start, end)] of trainer/normalizer/denormalizer specs */
    PyObject *spec_fields; /* dict: each spec's fields as read_message reads them, merged; None: declined */
    PyObject **strs;   /* per id: the piece as str, made on first use */
    Py_ssize_t n;
    int32_t *slots;    /* open addressing: id or -1 */
    size_t mask;
    int usual;
    int joins_space;   /* a usable piece holds "\u2581" right after another character */
    double min_normal; /* the least NORMAL score, NaN if none */
    uint64_t bytes_named[4]; /* the bytes b whose "<0xHH>" is the text of a BYTE piece */
    int byte_names_valid; /* every BYTE piece's text is "<0xHH>" (upper-case hex) */
} Vocab;

static PyTypeObject VocabType;

/* ---- the wire ---------------------------------------------------------------------- */

/* The varint at *pos (at most 10 bytes, before end); 0, or -1 when it is truncated or too long. */
static int
varint(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t end, uint64_t *out)
{
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*pos >= end)
            return -1;
        unsigned char byte = p[(*pos)++];
        value |= (uint64_t)(byte & 0x7F) << (shift < 64 ? shift : 63);
        if (byte < 0x80) {
            *out = value;
            return 0;
        }
    }
    return -1;
}

/* A length-delimited field's contents [*start, *stop) after its length at *pos. */
static int
length_field(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t end, Py_ssize_t *start, Py_ssize_t *stop)
{
    uint64_t size;
    if (varint(p, pos, end, &size) < 0 || size > (uint64_t)(end - *pos))
        return -1;
    *start = *pos;
    *stop = *pos + (Py_ssize_t)size;
    *pos = *stop;
    return 0;
}

/* The facts of one piece's bytes, found in one pass (`scan_piece`). */
typedef struct {
    int nul;   /* it holds a NUL byte */
    int joins; /* a "\u2581" (E2 96 81) right after a character that is not itself "\u2581" */
} PieceFacts;

#define HIGH_BITS 0x8080808080808080ULL
#define LOW_BITS 0x0101010101010101ULL

/* The bytes p[0:len] (len <= 8) packed into one word, the first lowest; `avail` bytes may be
 * read from p: with 8 of them, one load. */
static inline uint64_t
short_word(const unsigned char *p, Py_ssize_t len, Py_ssize_t avail)
{
    uint64_t w = 0;
    if (avail >= 8) {
        memcpy(&w, p, 8); /* little-endian hosts only: see read() */
        return len == 8 ? w : w & ((1ULL << (8 * len)) - 1);
    }
    for (Py_ssize_t i = 0; i < len; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

/* Whether the `n` (<= 8) bytes packed in `w` hold a zero byte (`w` is ASCII: no high bit). */
static inline int
has_nul(uint64_t w, Py_ssize_t n)
{
    uint64_t x = n == 8 ? w : w | ~((1ULL << (8 * n)) - 1); /* bytes past the n: 0xFF */
    return ((x - LOW_BITS) & ~x & HIGH_BITS) != 0;
}

/* Whether p[0:len] is strict UTF-8 (what Python's decode("utf-8") accepts: no overlong form,
 * no surrogate, nothing above U+10FFFF), with its facts; `avail` (>= len) bytes may be read
 * from p. ASCII is read a word (up to 8 bytes) at a time, and "\u2581" (E2 96 81, which starts
 * most pieces) in one step. */
static int
scan_piece(const unsigned char *p, Py_ssize_t len, Py_ssize_t avail, PieceFacts *facts)
{
    Py_ssize_t i = 0;
    facts->nul = 0;
    facts->joins = 0;
    while (i < len) {
        unsigned char c = p[i];
        if (c < 0x80) {
            Py_ssize_t n = len - i < 8 ? len - i : 8;
            uint64_t w = short_word(p + i, n, avail - i);
            if (!(w & HIGH_BITS)) {
                facts->nul |= has_nul(w, n);
                i += n;
                continue;
            }
            facts->nul |= c == 0;
            i++;
            continue;
        }
        /* the character before a "\u2581" at i > 0 is itself "\u2581" exactly when the three
         * bytes before i are E2 96 81 (E2 is a lead byte) */
        if (c == 0xE2 && len - i >= 3 && p[i + 1] == 0x96 && p[i + 2] == 0x81) {
            if (i > 0 && !(i >= 3 && p[i - 3] == 0xE2 && p[i - 2] == 0x96 && p[i - 1] == 0x81))
                facts->joins = 1;
            i += 3;
            continue;
        }
        int more;
        uint32_t cp, least;
        if (c >= 0xC2 && c <= 0xDF) {
            more = 1;
            cp = c & 0x1F;
            least = 0x80;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            more = 2;
            cp = c & 0x0F;
            least = 0x800;
        }
        else if (c >= 0xF0 && c <= 0xF4) {
            more = 3;
            cp = c & 0x07;
            least = 0x10000;
        }
        else {
            return 0;
        }
        if (len - i <= more)
            return 0;
        for (int k = 1; k <= more; k++) {
            unsigned char d = p[i + k];
            if ((d & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (d & 0x3F);
        }
        if (cp < least || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
        i += more + 1;
    }
    return 1;
}

/* One SentencePiece message in [pos, stop): 1 read, 0 unusual (the pure reader decides). The
 * usual layout (piece, score, maybe type, each once and in that order, with one-byte lengths)
 * is read without the general walk. */
static int
read_piece(const unsigned char *p, Py_ssize_t pos, Py_ssize_t stop, Record *r, PieceFacts *facts)
{
    r->start = 0;
    r->len = 0;
    r->score = 0.0f;
    r->type = NORMAL;
    if (stop - pos >= 7 && p[pos] == 0x0A && p[pos + 1] < 0x80) {
        Py_ssize_t a = pos + 2, b = a + p[pos + 1];
        if (b + 5 <= stop && p[b] == 0x15 && (b + 5 == stop || (b + 7 == stop && p[b + 5] == 0x18
                                                                && p[b + 6] >= 1 && p[b + 6] <= 6))) {
            if (!scan_piece(p + a, b - a, stop - a, facts))
                return 0;
            r->start = (uint32_t)a;
            r->len = (uint32_t)(b - a);
            memcpy(&r->score, p + b + 1, 4); /* little-endian hosts only: see read() */
            if (b + 7 == stop)
                r->type = p[b + 6];
            return 1;
        }
    }
    int seen = 0;
    facts->nul = facts->joins = 0;
    while (pos < stop) {
        uint64_t tag;
        if (varint(p, &pos, stop, &tag) < 0)
            return 0;
        uint64_t number = tag >> 3, wire = tag & 7;
        if (number < 1 || number > 3 || (seen & (1 << number)))
            return 0;
        seen |= 1 << number;
        if (number == 1) {
            Py_ssize_t a, b;
            if (wire != 2 || length_field(p, &pos, stop, &a, &b) < 0 || !scan_piece(p + a, b - a, stop - a, facts))
                return 0;
            r->start = (uint32_t)a;
            r->len = (uint32_t)(b - a);
        }
        else if (number == 2) {
            if (wire != 5 || stop - pos < 4)
                return 0;
            memcpy(&r->score, p + pos, 4); /* little-endian hosts only: see read() */
            pos += 4;
        }
        else {
            uint64_t value;
            if (wire != 0 || varint(p, &pos, stop, &value) < 0 || value < 1 || value > 6)
                return 0;
            r->type = (uint32_t)value;
        }
    }
    return 1;
}

/* Past one field that is not a piece; 0, or -1 for what the pure reader must see (a group,
 * field number 0, a bad wire type, a field past the end). */
static int
skip_field(const unsigned char *p, Py_ssize_t *pos, Py_ssize_t end, uint64_t wire)
{
    uint64_t value;
    Py_ssize_t a = 0, b = 0;
    switch (wire) {
    case 0: return varint(p, pos, end, &value);
    case 1: if (end - *pos < 8) return -1; *pos += 8; return 0;
    case 5: if (end - *pos < 4) return -1; *pos += 4; return 0;
    case 2: return length_field(p, pos, end, &a, &b);
    default: return -1;
    }
}

/* ---- the specs ----------------------------------------------------------------------- */

/* The fields of TrainerSpec and NormalizerSpec that polytok reads, as the schemas of
 * polytok/formats/sentencepiece.py (`_schemas`) name them; read as protobuf_wire.read_message
 * reads them. */
enum { K_STRING, K_BYTES, K_BOOL, K_INT32, K_ENUM };

typedef struct {
    uint32_t number;
    const char *name;
    int kind;
    int repeated;
    int32_t max_enum; /* K_ENUM: values 1..max_enum; any other leaves the field unset */
} SpecField;

static const SpecField TRAINER_FIELDS[] = {
    {3, "model_type", K_ENUM, 0, 4}, {4, "vocab_size", K_INT32, 0, 0},
    {24, "treat_whitespace_as_suffix", K_BOOL, 0, 0}, {30, "control_symbols", K_STRING, 1, 0},
    {31, "user_defined_symbols", K_STRING, 1, 0}, {35, "byte_fallback", K_BOOL, 0, 0},
    {40, "unk_id", K_INT32, 0, 0}, {41, "bos_id", K_INT32, 0, 0}, {42, "eos_id", K_INT32, 0, 0},
    {43, "pad_id", K_INT32, 0, 0}, {44, "unk_surface", K_STRING, 0, 0}, {45, "unk_piece", K_STRING, 0, 0},
    {46, "bos_piece", K_STRING, 0, 0}, {47, "eos_piece", K_STRING, 0, 0}, {48, "pad_piece", K_STRING, 0, 0},
    {0, NULL, 0, 0, 0},
};

static const SpecField NORMALIZER_FIELDS[] = {
    {1, "name", K_STRING, 0, 0}, {2, "precompiled_charsmap", K_BYTES, 0, 0}, {3, "add_dummy_prefix", K_BOOL, 0, 0},
    {4, "remove_extra_whitespaces", K_BOOL, 0, 0}, {5, "escape_whitespaces", K_BOOL, 0, 0},
    {0, NULL, 0, 0, 0},
};

/* The read-only view of bytes [a, b) of `owner` (the file's bytes object): a charsmap is most
 * of a small model's file, and the vocabulary holds the file already, so a copy would only be
 * fresh memory to fault in. */
static PyObject *
view_of(PyObject *owner, Py_ssize_t a, Py_ssize_t b)
{
    PyObject *whole = PyMemoryView_FromObject(owner);
    if (whole == NULL)
        return NULL;
    PyObject *part = PySequence_GetSlice(whole, a, b);
    Py_DECREF(whole);
    return part;
}

/* The value of field `f` at *pos (wire type `wire`), or NULL: with an exception set (-1 in
 * *status), or none (0 in *status: the pure reader must decide; 1: the field stays unset).
 * A bytes field is a view of `owner`, whose buffer `p` is. */
static PyObject *
spec_value(PyObject *owner, const unsigned char *p, Py_ssize_t *pos, Py_ssize_t stop, const SpecField *f,
           uint64_t wire, int *status)
{
    *status = 0;
    if (f->kind == K_STRING || f->kind == K_BYTES) {
        Py_ssize_t a, b;
        if (wire != 2 || length_field(p, pos, stop, &a, &b) < 0)
            return NULL;
        if (f->kind == K_BYTES) {
            PyObject *view = view_of(owner, a, b);
            if (view == NULL)
                *status = -1;
            return view;
        }
        PyObject *text = PyUnicode_DecodeUTF8((const char *)p + a, b - a, NULL);
        if (text == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            PyErr_Clear(); /* the pure reader names the offset */
        else if (text == NULL)
            *status = -1;
        return text;
    }
    uint64_t raw;
    if (wire != 0 || varint(p, pos, stop, &raw) < 0)
        return NULL;
    if (f->kind == K_BOOL)
        return PyBool_FromLong(raw != 0);
    int32_t value = (int32_t)(uint32_t)raw; /* the low 32 bits, signed */
    if (f->kind == K_ENUM && (value < 1 || value > f->max_enum)) {
        *status = 1;
        return NULL;
    }
    return PyLong_FromLong(value);
}

/* Reads one spec message into `fields` (later scalars win, repeated fields append, as
 * protobuf_wire.merge_fields merges a message seen twice): 1 read, 0 for what the pure reader
 * must see (a group, field number 0, a wire type or value it refuses, a field past the end), -1
 * on an error. */
static int
read_spec(PyObject *owner, const unsigned char *p, Py_ssize_t pos, Py_ssize_t stop, const SpecField *schema,
          PyObject *fields)
{
    while (pos < stop) {
        uint64_t tag;
        if (varint(p, &pos, stop, &tag) < 0 || (tag >> 3) == 0)
            return 0;
        uint64_t number = tag >> 3, wire = tag & 7;
        const SpecField *f = schema;
        while (f->name != NULL && f->number != number)
            f++;
        if (f->name == NULL) {
            if (skip_field(p, &pos, stop, wire) < 0)
                return 0;
            continue;
        }
        int status;
        PyObject *value = spec_value(owner, p, &pos, stop, f, wire, &status);
        if (value == NULL) {
            if (status == 1)
                continue;
            return status;
        }
        int done;
        if (f->repeated) {
            PyObject *list = PyDict_GetItemString(fields, f->name); /* borrowed */
            if (list == NULL) {
                list = PyList_New(0);
                done = list == NULL ? -1 : PyDict_SetItemString(fields, f->name, list);
                Py_XDECREF(list); /* the dict holds it */
            }
            else {
                done = 0;
            }
            if (done == 0)
                done = PyList_Append(list, value);
        }
        else {
            done = PyDict_SetItemString(fields, f->name, value);
        }
        Py_DECREF(value);
        if (done < 0)
            return -1;
    }
    return 1;
}

/* Adds the spec message [a, b) of field `number` (2, 3 or 5) to v->spec_fields; 0, or -1 on an
 * error. A message the pure reader must see leaves None there, and the specs to Python. */
static int
add_spec(Vocab *v, const unsigned char *p, Py_ssize_t a, Py_ssize_t b, uint64_t number)
{
    if (v->spec_fields == Py_None)
        return 0;
    const char *name = number == 2 ? "trainer_spec" : number == 3 ? "normalizer_spec" : "denormalizer_spec";
    PyObject *fields = PyDict_GetItemString(v->spec_fields, name); /* borrowed */
    if (fields == NULL) {
        fields = PyDict_New();
        if (fields == NULL || PyDict_SetItemString(v->spec_fields, name, fields) < 0) {
            Py_XDECREF(fields);
            return -1;
        }
        Py_DECREF(fields); /* the dict holds it */
    }
    int read = read_spec(v->data, p, a, b, number == 2 ? TRAINER_FIELDS : NORMALIZER_FIELDS, fields);
    if (read < 0)
        return -1;
    if (read == 0)
        Py_SETREF(v->spec_fields, Py_NewRef(Py_None));
    return 0;
}

/* ---- the index --------------------------------------------------------------------- */

/* Eight bytes at a time, the tail packed into one word (`short_word`; `avail` >= len bytes may
 * be read from s); mix64 spreads it. */
static inline uint64_t
hash_bytes(const unsigned char *s, Py_ssize_t len, Py_ssize_t avail)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)len;
    for (; len >= 8; s += 8, len -= 8, avail -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    if (len > 0)
        h = (h ^ short_word(s, len, avail)) * 0xFF51AFD7ED558CCDULL;
    return mix64(h);
}

static inline const Record *
record(const Vocab *v, Py_ssize_t id)
{
    return (const Record *)PyBytes_AS_STRING(v->records) + id;
}

/* The id of the UTF-8 text s[0:len], or -1. */
static Py_ssize_t
find(const Vocab *v, const unsigned char *s, Py_ssize_t len)
{
    const unsigned char *base = (const unsigned char *)PyBytes_AS_STRING(v->data);
    for (size_t slot = (size_t)hash_bytes(s, len, len) & v->mask;; slot = (slot + 1) & v->mask) {
        int32_t id = v->slots[slot];
        if (id < 0)
            return -1;
        const Record *r = record(v, id);
        if ((Py_ssize_t)r->len == len && memcmp(base + r->start, s, (size_t)len) == 0)
            return id;
    }
}

/* An empty index with room for every piece. */
static int
init_index(Vocab *v)
{
    size_t nslots = 8;
    while (nslots < (size_t)v->n * 2)
        nslots <<= 1;
    v->slots = PyMem_Malloc(nslots * sizeof(int32_t));
    if (v->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(v->slots, 0xFF, nslots * sizeof(int32_t));
    v->mask = nslots - 1;
    return 0;
}

/* Indexes piece `id`; clears v->usual if its text is already there. */
static void
index_piece(Vocab *v, Py_ssize_t id, const Record *r)
{
    const unsigned char *base = (const unsigned char *)PyBytes_AS_STRING(v->data);
    Py_ssize_t avail = PyBytes_GET_SIZE(v->data) - (Py_ssize_t)r->start;
    size_t slot = (size_t)hash_bytes(base + r->start, r->len, avail) & v->mask;
    for (;; slot = (slot + 1) & v->mask) {
        int32_t other = v->slots[slot];
        if (other < 0) {
            v->slots[slot] = (int32_t)id;
            return;
        }
        const Record *o = record(v, other);
        if (o->len == r->len && memcmp(base + o->start, base + r->start, r->len) == 0) {
            v->usual = 0; /* the pure reader's duplicate rules decide */
            return;
        }
    }
}

static const char HEX[] = "0123456789ABCDEF";

/* The value of the upper-case hex digit c, or -1. */
static inline int
hex_digit(unsigned char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Notes which byte a BYTE piece's text names ("<0xHH>"), or that one names none. */
static void
note_byte_piece(Vocab *v, const unsigned char *s, uint32_t len)
{
    int hi = len == 6 ? hex_digit(s[3]) : -1, lo = len == 6 ? hex_digit(s[4]) : -1;
    if (hi < 0 || lo < 0 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>') {
        v->byte_names_valid = 0;
        return;
    }
    int b = hi << 4 | lo;
    v->bytes_named[b >> 6] |= 1ULL << (b & 63);
}

/* The per-piece checks and facts of piece `id` (see the module notes). */
static void
check_piece(Vocab *v, Py_ssize_t id, const Record *r, const PieceFacts *facts)
{
    unsigned char *types = (unsigned char *)PyBytes_AS_STRING(v->types);
    types[id] = (unsigned char)r->type;
    if (r->len == 0 || r->len >= LONG_PIECE || facts->nul || !isfinite(r->score))
        v->usual = 0;
    if (r->type == NORMAL && !(r->score >= v->min_normal))
        v->min_normal = r->score;
    if (facts->joins && r->type != CONTROL && r->type != UNKNOWN && r->type != BYTE)
        v->joins_space = 1;
    if (r->type == BYTE)
        note_byte_piece(v, (const unsigned char *)PyBytes_AS_STRING(v->data) + r->start, r->len);
}

/* ---- read -------------------------------------------------------------------------- */

/* Counts the top-level pieces and checks the walk; -1 unusual. */
static Py_ssize_t
count_pieces(const unsigned char *p, Py_ssize_t end)
{
    Py_ssize_t pos = 0, n = 0;
    while (pos < end) {
        uint64_t tag;
        if (varint(p, &pos, end, &tag) < 0 || (tag >> 3) == 0)
            return -1;
        uint64_t number = tag >> 3, wire = tag & 7;
        if (number == 1 || number == 2 || number == 3 || number == 5) {
            Py_ssize_t a, b;
            if (wire != 2 || length_field(p, &pos, end, &a, &b) < 0)
                return -1;
            n += number == 1;
        }
        else if (skip_field(p, &pos, end, wire) < 0) {
            return -1;
        }
    }
    return n;
}

static PyObject *
fill(Vocab *v, const unsigned char *p, Py_ssize_t end)
{
    Record *records = (Record *)PyBytes_AS_STRING(v->records);
    Py_ssize_t pos = 0, k = 0;
    while (pos < end) {
        uint64_t tag = 0;
        if (varint(p, &pos, end, &tag) < 0) /* count_pieces has walked it: never taken */
            Py_RETURN_NONE;
        uint64_t number = tag >> 3, wire = tag & 7;
        if (number != 1 && number != 2 && number != 3 && number != 5) {
            if (skip_field(p, &pos, end, wire) < 0)
                Py_RETURN_NONE;
            continue;
        }
        Py_ssize_t a = 0, b = 0;
        if (length_field(p, &pos, end, &a, &b) < 0)
            Py_RETURN_NONE;
        if (number == 1) {
            PieceFacts facts;
            if (k >= v->n || !read_piece(p, a, b, &records[k], &facts))
                Py_RETURN_NONE;
            check_piece(v, k, &records[k], &facts);
            index_piece(v, k, &records[k]);
            k++;
            continue;
        }
        PyObject *span = Py_BuildValue("(inn)", (int)number, a, b);
        if (span == NULL || PyList_Append(v->specs, span) < 0) {
            Py_XDECREF(span);
            return NULL;
        }
        Py_DECREF(span);
        if (add_spec(v, p, a, b, number) < 0)
            return NULL;
    }
    if (k != v->n)
        Py_RETURN_NONE;
    return Py_NewRef((PyObject *)v);
}

/* read(data: bytes) -> Vocab | None */
static PyObject *
spm_read(PyObject *module, PyObject *data)
{
    if (!PyBytes_Check(data)) {
        PyErr_SetString(PyExc_TypeError, "spm_model.read: data must be bytes");
        return NULL;
    }
    const uint16_t probe = 1;
    Py_ssize_t end = PyBytes_GET_SIZE(data);
    if (*(const unsigned char *)&probe != 1 || end >= (Py_ssize_t)UINT32_MAX)
        Py_RETURN_NONE; /* a big-endian host, or offsets past uint32: the pure reader */
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t n = count_pieces(p, end);
    if (n < 0 || n > INT32_MAX / 2 || (size_t)n > PY_SSIZE_T_MAX / sizeof(Record))
        Py_RETURN_NONE;
    Vocab *v = PyObject_New(Vocab, &VocabType);
    if (v == NULL)
        return NULL;
    v->data = Py_NewRef(data);
    v->records = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(Record));
    v->types = PyBytes_FromStringAndSize(NULL, n);
    v->odd = PyList_New(0);
    v->specs = PyList_New(0);
    v->spec_fields = PyDict_New();
    v->strs = PyMem_Calloc((size_t)(n ? n : 1), sizeof(PyObject *));
    v->n = n;
    v->slots = NULL;
    v->mask = 0;
    v->usual = 1;
    v->joins_space = 0;
    v->min_normal = NAN;
    memset(v->bytes_named, 0, sizeof(v->bytes_named));
    v->byte_names_valid = 1;
    if (v->records == NULL || v->types == NULL || v->odd == NULL || v->specs == NULL || v->spec_fields == NULL
        || v->strs == NULL) {
        if (v->strs == NULL)
            PyErr_NoMemory();
        Py_DECREF(v);
        return NULL;
    }
    if (init_index(v) < 0) {
        Py_DECREF(v);
        return NULL;
    }
    PyObject *done = fill(v, p, end);
    if (done != (PyObject *)v) {
        Py_DECREF(v);
        return done;
    }
    Py_DECREF(done);
    const unsigned char *types = (const unsigned char *)PyBytes_AS_STRING(v->types);
    for (Py_ssize_t id = 0; id < n; id++) {
        if (types[id] == NORMAL)
            continue;
        PyObject *index = PyLong_FromSsize_t(id);
        if (index == NULL || PyList_Append(v->odd, index) < 0) {
            Py_XDECREF(index);
            Py_DECREF(v);
            return NULL;
        }
        Py_DECREF(index);
    }
    return (PyObject *)v;
}

/* ---- the Vocab object -------------------------------------------------------------- */

static void
Vocab_dealloc(Vocab *self)
{
    if (self->strs != NULL) {
        for (Py_ssize_t i = 0; i < self->n; i++)
            Py_XDECREF(self->strs[i]);
        PyMem_Free(self->strs);
    }
    PyMem_Free(self->slots);
    Py_XDECREF(self->data);
    Py_XDECREF(self->records);
    Py_XDECREF(self->types);
    Py_XDECREF(self->odd);
    Py_XDECREF(self->specs);
    Py_XDECREF(self->spec_fields);
    PyObject_Free(self);
}

static Py_ssize_t
Vocab_length(Vocab *self)
{
    return self->n;
}

static PyObject *
Vocab_item(Vocab *self, Py_ssize_t id)
{
    if (id < 0 || id >= self->n) {
        PyErr_SetString(PyExc_IndexError, "piece id out of range");
        return NULL;
    }
    if (self->strs[id] == NULL) {
        const Record *r = record(self, id);
        PyObject *made = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(self->data) + r->start, r->len, "strict");
        if (made == NULL)
            return NULL;
        if (self->strs[id] == NULL) /* the allocation may have run other code (a collection) */
            self->strs[id] = made;
        else
            Py_DECREF(made);
    }
    return Py_NewRef(self->strs[id]);
}

static PyObject *
Vocab_subscript(Vocab *self, PyObject *key)
{
    if (PySlice_Check(key)) {
        Py_ssize_t start, stop, step;
        if (PySlice_Unpack(key, &start, &stop, &step) < 0)
            return NULL;
        Py_ssize_t count = PySlice_AdjustIndices(self->n, &start, &stop, step);
        PyObject *out = PyList_New(count);
        for (Py_ssize_t i = 0, at = start; out != NULL && i < count; i++, at += step) {
            PyObject *item = Vocab_item(self, at);
            if (item == NULL)
                Py_CLEAR(out);
            else
                PyList_SET_ITEM(out, i, item);
        }
        return out;
    }
    Py_ssize_t id = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    return Vocab_item(self, id < 0 ? id + self->n : id);
}

/* find(piece: str) -> int: the piece's id, -1 if none. */
static PyObject *
Vocab_find(Vocab *self, PyObject *piece)
{
    if (!PyUnicode_Check(piece)) {
        PyErr_SetString(PyExc_TypeError, "find: a piece must be str");
        return NULL;
    }
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(piece, &len);
    if (s == NULL) {
        PyErr_Clear(); /* a lone surrogate is no piece */
        return PyLong_FromLong(-1);
    }
    return PyLong_FromSsize_t(find(self, (const unsigned char *)s, len));
}

/* scores() -> list[float]: every piece's score, as the pure reader gives them. */
static PyObject *
Vocab_scores(Vocab *self, PyObject *unused)
{
    PyObject *out = PyList_New(self->n);
    for (Py_ssize_t i = 0; out != NULL && i < self->n; i++) {
        PyObject *score = PyFloat_FromDouble((double)record(self, i)->score);
        if (score == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, score);
    }
    return out;
}

/* byte_ids() -> list: per byte b, the id of the piece "<0xHH>" (upper-case hex), None if none. */
static PyObject *
Vocab_byte_ids(Vocab *self, PyObject *unused)
{
    PyObject *out = PyList_New(256);
    unsigned char name[6] = {'<', '0', 'x', 0, 0, '>'};
    for (int b = 0; out != NULL && b < 256; b++) {
        name[3] = (unsigned char)HEX[b >> 4];
        name[4] = (unsigned char)HEX[b & 15];
        Py_ssize_t id = find(self, name, 6);
        PyObject *item = id < 0 ? Py_NewRef(Py_None) : PyLong_FromSsize_t(id);
        if (item == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, b, item);
    }
    return out;
}

static PyObject *
Vocab_get_byte_count(Vocab *self, void *closure)
{
    if (!self->byte_names_valid)
        Py_RETURN_NONE;
    int count = 0;
    for (int k = 0; k < 4; k++)
        for (uint64_t w = self->bytes_named[k]; w; w &= w - 1)
            count++;
    return PyLong_FromLong(count);
}

static PyObject *
Vocab_reduce(Vocab *self, PyObject *unused)
{
    PyObject *items = PySequence_List((PyObject *)self);
    if (items == NULL)
        return NULL;
    return Py_BuildValue("(O(N))", (PyObject *)&PyList_Type, items); /* unpickles as a list */
}

static PyObject *
Vocab_get_min_normal(Vocab *self, void *closure)
{
    if (isnan(self->min_normal))
        Py_RETURN_NONE;
    return PyFloat_FromDouble(self->min_normal);
}

static PyObject *
Vocab_get_flag(Vocab *self, void *closure)
{
    return PyBool_FromLong(closure ? self->joins_space : self->usual);
}

static PyMemberDef Vocab_members[] = {
    {"data", T_OBJECT_EX, offsetof(Vocab, data), READONLY, "the file's bytes"},
    {"records", T_OBJECT_EX, offsetof(Vocab, records), READONLY, "the packed piece records"},
    {"types", T_OBJECT_EX, offsetof(Vocab, types), READONLY, "bytes: each piece's type (1..6)"},
    {"odd", T_OBJECT_EX, offsetof(Vocab, odd), READONLY, "the ids whose type is not NORMAL"},
    {"specs", T_OBJECT_EX, offsetof(Vocab, specs), READONLY,
     "(field number, start, end) of each trainer_spec, normalizer_spec, denormalizer_spec"},
    {"spec_fields", T_OBJECT_EX, offsetof(Vocab, spec_fields), READONLY,
     "{spec name: its fields, merged}, as read_message reads them; None: the pure reader must read them"},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef Vocab_getset[] = {
    {"usual", (getter)Vocab_get_flag, NULL, "false: a per-piece load check needs the pure reader", NULL},
    {"joins_space", (getter)Vocab_get_flag, NULL,
     "a piece that is not CONTROL, UNKNOWN or BYTE holds a \\u2581 right after another character", (void *)1},
    {"min_normal_score", (getter)Vocab_get_min_normal, NULL, "the least NORMAL score, None if none", NULL},
    {"byte_count", (getter)Vocab_get_byte_count, NULL,
     "how many distinct bytes the BYTE pieces name (\"<0xHH>\"); None if one names none", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Vocab_methods[] = {
    {"find", (PyCFunction)Vocab_find, METH_O, "find(piece) -> int: the piece's id, -1 if none"},
    {"scores", (PyCFunction)Vocab_scores, METH_NOARGS, "scores() -> list[float]"},
    {"byte_ids", (PyCFunction)Vocab_byte_ids, METH_NOARGS,
     "byte_ids() -> list: per byte, the id of its \"<0xHH>\" piece, None if none"},
    {"__reduce__", (PyCFunction)Vocab_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Vocab_as_sequence = {
    .sq_length = (lenfunc)Vocab_length,
    .sq_item = (ssizeargfunc)Vocab_item,
};

static PyMappingMethods Vocab_as_mapping = {
    .mp_length = (lenfunc)Vocab_length,
    .mp_subscript = (binaryfunc)Vocab_subscript,
};

static PyTypeObject VocabType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "polytok._kernels.spm_model.Vocab",
    .tp_basicsize = sizeof(Vocab),
    .tp_dealloc = (destructor)Vocab_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The pieces of a .model as read (a read-only sequence of str), their index and load facts.",
    .tp_as_sequence = &Vocab_as_sequence,
    .tp_as_mapping = &Vocab_as_mapping,
    .tp_methods = Vocab_methods,
    .tp_members = Vocab_members,
    .tp_getset = Vocab_getset,
};

static PyMethodDef module_methods[] = {
    {"read", (PyCFunction)spm_read, METH_O,
     "read(data: bytes) -> Vocab | None: the pieces of a ModelProto, None where the pure reader must run"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef spm_model_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "polytok._kernels.spm_model",
    .m_doc = "The pieces of a SentencePiece .model, read in C (polytok.formats.sentencepiece).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC
PyInit_spm_model(void)
{
    if (PyType_Ready(&VocabType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&spm_model_module);
    if (module == NULL)
        return NULL;
    if (PyModule_AddObjectRef(module, "Vocab", (PyObject *)&VocabType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}

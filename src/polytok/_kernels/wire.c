/* The long loops of the file readers: SentencePiece's repeated ``pieces``, GGUF's
 * string arrays and merge lines, and tokenizer.json's BPE merges with their ids, read in
 * one call into plain Python lists, and the Unigram scores of tokenizer.json as serde_json reads them;
 * a tokenizer.json's Unigram vocab straight from the file's bytes (json_unigram_vocab).
 *
 * The compiled half of polytok.formats.sentencepiece (read_model_proto),
 * polytok.formats.gguf_reader (_Reader.strings), polytok.formats.gguf (_merge_pairs, _merge_list),
 * polytok.models._bpe_merges (read_merges, merge_ids, json_merge_ids), polytok.models.unigram (serde_f64) and
 * json.loads (polytok.formats.hf_json), which define the semantics. These functions never raise a FormatError: on anything
 * they do not read exactly as the pure reader does (a broken length, invalid UTF-8, an
 * unusual field), they stop or answer None, and the pure reader takes over from there,
 * so a broken file gets the pure reader's error, with its key and offset.
 *
 * Every length and offset is checked against the buffer before it is read. The GIL is
 * held throughout (every step makes a Python object), except in gguf_string_array_end, a
 * byte loop.
 *
 * Wire rules: protobuf's encoding (https://protobuf.dev/programming-guides/encoding/),
 * as polytok.formats.protobuf_wire applies them; GGUF: llama.cpp ggml/src/gguf.cpp
 * (a uint64 length, then the bytes); the merge line split is llama.cpp's
 * src/llama-vocab.cpp (load: the first space at or after index 1).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernel_util.h"

/* A varint of at most 10 bytes at data[*pos] (before end): 1 and the value, or 0. */
static int read_varint(const unsigned char *data, Py_ssize_t *pos, Py_ssize_t end, uint64_t *value) {
    uint64_t result = 0;
    Py_ssize_t p = *pos;
    for (int shift = 0; shift < 70; shift += 7) {
        if (p >= end) return 0;
        unsigned char byte = data[p++];
        if (shift < 64) result |= (uint64_t)(byte & 0x7F) << shift;
        if (byte < 0x80) {
            *value = result;
            *pos = p;
            return 1;
        }
    }
    return 0;
}

static double unpack_float32_le(const unsigned char *p) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyFloat_Unpack4((const char *)p, 1);
#else
    return _PyFloat_Unpack4(p, 1);
#endif
}

/* One SentencePiece message in data[start:stop]: 1 with new references in *piece and
 * *score and the type in *kind, or 0 (not read here; nothing left to free), or -1 with an
 * exception set (out of memory). Fields 1 (string, at most once), 2 (float) and 3 (enum 1..6;
 * another value leaves the field unset) each keep their last value; any other field, a second
 * string, a field of the wrong wire type, a length past stop or invalid UTF-8 is 0. */
static int read_piece(const unsigned char *data, Py_ssize_t pos, Py_ssize_t stop, PyObject **piece,
                      double *score, long *kind) {
    Py_ssize_t text_at = -1, text_len = 0;
    double value = 0.0;
    long type = 1;
    while (pos < stop) {
        unsigned char tag = data[pos++];
        if (tag == 0x0A) {
            uint64_t size;
            /* a second piece: the pure walk decodes (and may refuse) the first one too */
            if (text_at >= 0) return 0;
            if (!read_varint(data, &pos, stop, &size) || size > (uint64_t)(stop - pos)) return 0;
            text_at = pos;
            text_len = (Py_ssize_t)size;
            pos += (Py_ssize_t)size;
        } else if (tag == 0x15) {
            if (stop - pos < 4) return 0;
            value = unpack_float32_le(data + pos);
            if (value == -1.0 && PyErr_Occurred()) return -1;
            pos += 4;
        } else if (tag == 0x18) {
            uint64_t raw;
            if (!read_varint(data, &pos, stop, &raw)) return 0;
            int32_t low = (int32_t)(uint32_t)(raw & 0xFFFFFFFFu);
            if (low >= 1 && low <= 6) type = low;
        } else {
            return 0;
        }
    }
    PyObject *text;
    if (text_at < 0) {
        text = PyUnicode_New(0, 0);
        if (text == NULL) return -1;
    } else {
        text = PyUnicode_DecodeUTF8((const char *)data + text_at, text_len, NULL);
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;
            PyErr_Clear();
            return 0;
        }
    }
    *piece = text;
    *score = value;
    *kind = type;
    return 1;
}

static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int failed = PyList_Append(list, item);
    Py_DECREF(item);
    return failed;
}

/* read_pieces(data, pos, end, pieces, scores, types) -> position
 *
 * Reads the consecutive top-level ``pieces`` entries (field 1) of a ModelProto from pos,
 * appending each one's piece, score and type to the three lists, and returns where the
 * first entry it does not read starts (another field, or one the pure reader must see). */
static PyObject *read_pieces(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end;
    PyObject *pieces, *scores, *types;
    if (!PyArg_ParseTuple(args, "y*nnO!O!O!:read_pieces", &view, &pos, &end, &PyList_Type, &pieces,
                          &PyList_Type, &scores, &PyList_Type, &types))
        return NULL;
    if (end > view.len) end = view.len;
    if (pos < 0) pos = end;
    const unsigned char *data = (const unsigned char *)view.buf;
    while (pos < end && data[pos] == 0x0A) {
        Py_ssize_t at = pos + 1;
        uint64_t size;
        if (!read_varint(data, &at, end, &size) || size > (uint64_t)(end - at)) break;
        Py_ssize_t stop = at + (Py_ssize_t)size;
        PyObject *piece = NULL;
        double score = 0.0;
        long kind = 1;
        int found = read_piece(data, at, stop, &piece, &score, &kind);
        if (found < 0) goto fail;
        if (found == 0) break;
        if (append_new(pieces, piece) < 0) goto fail;
        if (append_new(scores, PyFloat_FromDouble(score)) < 0) goto fail;
        if (append_new(types, PyLong_FromLong(kind)) < 0) goto fail;
        pos = stop;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(pos);
fail:
    PyBuffer_Release(&view);
    return NULL;
}

/* gguf_strings(data, pos, end, count, big_endian) -> (list of str, position) or None
 *
 * ``count`` GGUF strings from pos: each a uint64 length (in the file's byte order) and that
 * many bytes of UTF-8. None when one does not fit before end or is not valid UTF-8 (the
 * pure loop then says which and where). */
static PyObject *gguf_strings(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, count;
    int big;
    if (!PyArg_ParseTuple(args, "y*nnnp:gguf_strings", &view, &pos, &end, &count, &big)) return NULL;
    if (end > view.len) end = view.len;
    const unsigned char *data = (const unsigned char *)view.buf;
    PyObject *out = NULL;
    /* every string takes at least its 8-byte length: a count that cannot fit is refused before allocating */
    if (pos < 0 || pos > end || count < 0 || count > (end - pos) / 8) goto give_up;
    out = PyList_New(count);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (end - pos < 8) goto give_up;
        uint64_t size = 0;
        for (int k = 0; k < 8; k++) {
            unsigned char byte = data[pos + (big ? k : 7 - k)];
            size = size << 8 | byte;
        }
        pos += 8;
        if (size > (uint64_t)(end - pos)) goto give_up;
        PyObject *text = PyUnicode_DecodeUTF8((const char *)data + pos, (Py_ssize_t)size, NULL);
        if (text == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) goto fail;
            PyErr_Clear();
            goto give_up;
        }
        PyList_SET_ITEM(out, i, text);
        pos += (Py_ssize_t)size;
    }
    PyBuffer_Release(&view);
    PyObject *result = Py_BuildValue("(Nn)", out, pos);
    return result;
give_up:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(out);
    PyBuffer_Release(&view);
    return NULL;
}

/* merge_pairs(lines) -> list of (left, right)
 *
 * Each GGUF merge line cut at its first space at or after index 1: ("", "") when it has
 * none. Duplicates are kept (the caller keeps the first of each). */
static PyObject *merge_pairs(PyObject *self, PyObject *lines) {
    if (!PyList_Check(lines)) {
        PyErr_SetString(PyExc_TypeError, "merge_pairs takes a list of str");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(lines);
    PyObject *out = PyList_New(n);
    if (out == NULL) return NULL;
    PyObject *empty = PyUnicode_New(0, 0);
    if (empty == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (!PyUnicode_Check(line)) {
            PyErr_SetString(PyExc_TypeError, "merge_pairs takes a list of str");
            goto fail;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(line);
        Py_ssize_t cut = length > 1 ? PyUnicode_FindChar(line, ' ', 1, length, 1) : -1;
        if (cut == -2) goto fail;
        PyObject *pair;
        if (cut < 0) {
            pair = PyTuple_Pack(2, empty, empty);
        } else {
            PyObject *left = PyUnicode_Substring(line, 0, cut);
            PyObject *right = left == NULL ? NULL : PyUnicode_Substring(line, cut + 1, length);
            pair = right == NULL ? NULL : PyTuple_Pack(2, left, right);
            Py_XDECREF(left);
            Py_XDECREF(right);
        }
        if (pair == NULL) goto fail;
        PyList_SET_ITEM(out, i, pair);
    }
    Py_DECREF(empty);
    return out;
fail:
    Py_XDECREF(empty);
    Py_DECREF(out);
    return NULL;
}

/* A GGUF uint64 at p, in the file's byte order. */
static uint64_t read_u64(const unsigned char *p, int big) {
    uint64_t value = 0;
    for (int k = 0; k < 8; k++) value = value << 8 | p[big ? k : 7 - k];
    return value;
}

/* Whether s[0:size] is UTF-8 that Python's strict decoder reads without an error: the Unicode
 * standard's well-formed byte sequences (Table 3-7: no overlong forms, no surrogates, nothing
 * above U+10FFFF). */
static int utf8_valid(const unsigned char *s, Py_ssize_t size) {
    Py_ssize_t i = 0;
    while (i < size) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        Py_ssize_t follow;
        unsigned char low = 0x80, high = 0xBF; /* the range of the second byte */
        if (c >= 0xC2 && c <= 0xDF) {
            follow = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            follow = 2;
            if (c == 0xE0) low = 0xA0;
            if (c == 0xED) high = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            follow = 3;
            if (c == 0xF0) low = 0x90;
            if (c == 0xF4) high = 0x8F;
        } else {
            return 0;
        }
        if (size - i - 1 < follow || s[i + 1] < low || s[i + 1] > high) return 0;
        for (Py_ssize_t k = 2; k <= follow; k++)
            if ((s[i + k] & 0xC0) != 0x80) return 0;
        i += follow + 1;
    }
    return 1;
}

/* gguf_string_array_end(data, pos, end, count, big_endian) -> position or None
 *
 * Where ``count`` GGUF strings from pos end, each checked as gguf_strings reads it (its length
 * fits before end, its bytes are valid UTF-8) without making a str. None where gguf_strings
 * would answer None (the pure loop then says which string, and where). */
static PyObject *gguf_string_array_end(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, count;
    int big;
    if (!PyArg_ParseTuple(args, "y*nnnp:gguf_string_array_end", &view, &pos, &end, &count, &big)) return NULL;
    if (end > view.len) end = view.len;
    const unsigned char *data = (const unsigned char *)view.buf;
    int valid = pos >= 0 && pos <= end && count >= 0 && count <= (end - pos) / 8;
    /* a byte loop over the held buffer: no Python object is touched */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; valid && i < count; i++) {
        if (end - pos < 8) {
            valid = 0;
            break;
        }
        uint64_t size = read_u64(data + pos, big);
        pos += 8;
        if (size > (uint64_t)(end - pos) || !utf8_valid(data + pos, (Py_ssize_t)size)) {
            valid = 0;
            break;
        }
        pos += (Py_ssize_t)size;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (!valid) Py_RETURN_NONE;
    return PyLong_FromSsize_t(pos);
}

/* The distinct parts of the merge lines: one str per distinct text, however many merges name
 * it (a 262k-token vocabulary has some 515k merges but at most 262k distinct parts). Each
 * part is known by its UTF-8 bytes, in the buffer being read. */
typedef struct {
    PyObject **texts;             /* owned */
    const unsigned char **starts; /* the first copy of each part's bytes */
    Py_ssize_t *sizes;
    uint64_t *hashes;
    Py_ssize_t count, capacity;
    uint32_t *slots; /* index + 1 into the parts, 0 empty; a power of two, at most three quarters full */
    size_t mask;
} Parts;

static uint64_t bytes_hash(const unsigned char *p, Py_ssize_t size) {
    uint64_t h = 0xCBF29CE484222325ULL; /* FNV-1a, then mixed */
    for (Py_ssize_t k = 0; k < size; k++) h = (h ^ p[k]) * 0x100000001B3ULL;
    return mix64(h ^ (uint64_t)size);
}

static void parts_free(Parts *parts) {
    for (Py_ssize_t i = 0; i < parts->count; i++) Py_DECREF(parts->texts[i]);
    PyMem_Free(parts->texts);
    PyMem_Free(parts->starts);
    PyMem_Free(parts->sizes);
    PyMem_Free(parts->hashes);
    PyMem_Free(parts->slots);
}

static int parts_grow(Parts *parts) {
    if (parts->capacity >= (Py_ssize_t)(UINT32_MAX / 4) ||
        parts->capacity > (PY_SSIZE_T_MAX / 4) / (Py_ssize_t)sizeof(uint64_t)) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t capacity = parts->capacity ? 2 * parts->capacity : 1024;
    size_t n = (size_t)capacity;
    PyObject **texts = PyMem_Realloc(parts->texts, n * sizeof(PyObject *));
    if (texts == NULL) goto no_memory;
    parts->texts = texts;
    const unsigned char **starts = PyMem_Realloc(parts->starts, n * sizeof(const unsigned char *));
    if (starts == NULL) goto no_memory;
    parts->starts = starts;
    Py_ssize_t *sizes = PyMem_Realloc(parts->sizes, n * sizeof(Py_ssize_t));
    if (sizes == NULL) goto no_memory;
    parts->sizes = sizes;
    uint64_t *hashes = PyMem_Realloc(parts->hashes, n * sizeof(uint64_t));
    if (hashes == NULL) goto no_memory;
    parts->hashes = hashes;
    parts->capacity = capacity;
    /* a power of two at least 4/3 of the capacity: never fuller than three quarters */
    size_t size = 16;
    while (size < n + n / 3) size <<= 1;
    uint32_t *slots = PyMem_Calloc(size, sizeof(uint32_t));
    if (slots == NULL) goto no_memory;
    for (Py_ssize_t i = 0; i < parts->count; i++) {
        size_t slot = (size_t)parts->hashes[i] & (size - 1);
        while (slots[slot] != 0) slot = (slot + 1) & (size - 1);
        slots[slot] = (uint32_t)(i + 1);
    }
    PyMem_Free(parts->slots);
    parts->slots = slots;
    parts->mask = size - 1;
    return 0;
no_memory:
    PyErr_NoMemory();
    return -1;
}

/* The index of the part p[0:size], a str made when it is new: >= 0; -1 on an error, -2 when
 * the bytes are not UTF-8 (the caller hands over to the pure path). */
static Py_ssize_t part_index(Parts *parts, const unsigned char *p, Py_ssize_t size) {
    uint64_t hash = bytes_hash(p, size);
    if (parts->count == parts->capacity && parts_grow(parts) < 0) return -1;
    size_t slot = (size_t)hash & parts->mask;
    for (; parts->slots[slot] != 0; slot = (slot + 1) & parts->mask) {
        Py_ssize_t i = (Py_ssize_t)parts->slots[slot] - 1;
        if (parts->hashes[i] == hash && parts->sizes[i] == size && memcmp(parts->starts[i], p, (size_t)size) == 0)
            return i;
    }
    PyObject *text = PyUnicode_DecodeUTF8((const char *)p, size, NULL);
    if (text == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return -1;
        PyErr_Clear();
        return -2;
    }
    Py_ssize_t i = parts->count++;
    parts->texts[i] = text;
    parts->starts[i] = p;
    parts->sizes[i] = size;
    parts->hashes[i] = hash;
    parts->slots[slot] = (uint32_t)(i + 1);
    return i;
}

/* gguf_merges(data, count, big_endian) -> (lefts, rights) or None
 *
 * The pairs of polytok.formats.gguf._merge_list, read from the bytes of a GGUF string array
 * (``count`` strings, each a uint64 length and UTF-8 bytes, as gguf_string_array_end checked
 * them): each line cut at its first space after its first character, as merge_pairs cuts it
 * (in UTF-8 a space byte is only ever the character U+0020), and a pair listed again dropped
 * (its first copy keeps the rank). No str is made for a whole line, and equal parts are one
 * str (at most one per token: less memory, and the BPE model hashes each once); pairs are
 * told apart by their two part indexes. None, and the pure path runs, when a line has no cut
 * or the bytes are not what gguf_string_array_end accepts. */
static PyObject *gguf_merges(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t count;
    int big;
    if (!PyArg_ParseTuple(args, "y*np:gguf_merges", &view, &count, &big)) return NULL;
    const unsigned char *data = (const unsigned char *)view.buf;
    Py_ssize_t end = view.len, pos = 0;
    Parts parts = {NULL, NULL, NULL, NULL, 0, 0, NULL, 0};
    PyObject *result = NULL, *lefts = NULL, *rights = NULL;
    uint32_t *pairs = NULL; /* the left and right part index of each distinct pair, in order */
    uint64_t *seen = NULL;  /* (left << 32 | right) + 1 of each distinct pair, 0 empty */
    Py_ssize_t kept = 0;
    /* every line takes at least its 8-byte length; part indexes fit in 32 bits */
    if (count < 0 || count > end / 8 || count >= (Py_ssize_t)(UINT32_MAX / 4)) goto give_up;
    size_t size = 16;
    while (size < (size_t)count + (size_t)count / 3) size <<= 1;
    seen = PyMem_Calloc(size, sizeof(uint64_t));
    pairs = seen == NULL ? NULL : PyMem_Malloc((size_t)(count ? count : 1) * 2 * sizeof(uint32_t));
    if (pairs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (end - pos < 8) goto give_up;
        uint64_t length = read_u64(data + pos, big);
        pos += 8;
        if (length > (uint64_t)(end - pos)) goto give_up;
        const unsigned char *line = data + pos;
        Py_ssize_t line_size = (Py_ssize_t)length;
        pos += line_size;
        /* the bytes after the first of a multi-byte character are never a space: the first
         * space from byte 1 is the first one after the first character */
        if (line_size < 2) goto give_up;
        const unsigned char *space = memchr(line + 1, ' ', (size_t)(line_size - 1));
        if (space == NULL) goto give_up;
        Py_ssize_t cut = space - line;
        Py_ssize_t left = part_index(&parts, line, cut);
        Py_ssize_t right = left < 0 ? left : part_index(&parts, line + cut + 1, line_size - cut - 1);
        if (right == -2) goto give_up;
        if (right < 0) goto done;
        uint64_t key = ((uint64_t)left << 32 | (uint64_t)right) + 1;
        size_t slot = (size_t)mix64(key) & (size - 1);
        while (seen[slot] != 0 && seen[slot] != key) slot = (slot + 1) & (size - 1);
        if (seen[slot] == key) continue;
        seen[slot] = key;
        pairs[2 * kept] = (uint32_t)left;
        pairs[2 * kept + 1] = (uint32_t)right;
        kept++;
    }
    if (pos != end) goto give_up;
    lefts = PyList_New(kept);
    rights = lefts == NULL ? NULL : PyList_New(kept);
    if (rights == NULL) goto done;
    for (Py_ssize_t k = 0; k < kept; k++) {
        PyObject *left = parts.texts[pairs[2 * k]], *right = parts.texts[pairs[2 * k + 1]];
        Py_INCREF(left);
        Py_INCREF(right);
        PyList_SET_ITEM(lefts, k, left);
        PyList_SET_ITEM(rights, k, right);
    }
    result = PyTuple_Pack(2, lefts, rights);
    goto done;
give_up:
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(lefts);
    Py_XDECREF(rights);
    parts_free(&parts);
    PyMem_Free(seen);
    PyMem_Free(pairs);
    PyBuffer_Release(&view);
    return result;
}

/* `item` when it is an exact str, else NULL (a subclass included). */
static PyObject *exact_str(PyObject *item) { return PyUnicode_CheckExact(item) ? item : NULL; }

/* Whether the str `line` starts with "#version". */
static int is_version_line(PyObject *line) {
    static const char mark[] = "#version";
    Py_ssize_t size = (Py_ssize_t)(sizeof mark - 1);
    if (PyUnicode_GET_LENGTH(line) < size) return 0;
    int kind = PyUnicode_KIND(line);
    const void *data = PyUnicode_DATA(line);
    for (Py_ssize_t k = 0; k < size; k++)
        if (PyUnicode_READ(kind, data, k) != (Py_UCS4)(unsigned char)mark[k]) return 0;
    return 1;
}

/* json_merges(raw) -> (lefts, rights) or None
 *
 * The left and right parts of a tokenizer.json ``merges`` list, as
 * polytok.models._bpe_merges.read_merges reads them: ``["a b", ...]`` (the first entry a
 * str: each entry a str with exactly one space, cut there) or ``[["a", "b"], ...]`` (each
 * entry a list of two str). None for an empty list, a ``#version`` line, or any entry the
 * pure reader would refuse or read differently: it then reads the list again and names
 * the entry. HF tokenizers 0.23.3, tokenizers/src/models/bpe/serialization.rs. */
static PyObject *json_merges(PyObject *self, PyObject *raw) {
    if (!PyList_CheckExact(raw)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(raw);
    if (n == 0) Py_RETURN_NONE;
    PyObject *lefts = PyList_New(n);
    PyObject *rights = lefts == NULL ? NULL : PyList_New(n);
    if (rights == NULL) goto fail;
    int legacy = PyUnicode_CheckExact(PyList_GET_ITEM(raw, 0));
    for (Py_ssize_t i = 0; i < n; i++) {
        /* the list may not change under us: nothing here runs Python code */
        PyObject *entry = PyList_GET_ITEM(raw, i);
        PyObject *left, *right;
        if (legacy) {
            if (exact_str(entry) == NULL) goto give_up;
            Py_ssize_t length = PyUnicode_GET_LENGTH(entry);
            Py_ssize_t cut = PyUnicode_FindChar(entry, ' ', 0, length, 1);
            if (cut == -2) goto fail;
            if (cut < 0) goto give_up;
            Py_ssize_t again = PyUnicode_FindChar(entry, ' ', cut + 1, length, 1);
            if (again == -2) goto fail;
            if (again >= 0) goto give_up;
            /* a "#version" line is skipped by the pure reader, which also keeps its position */
            if (is_version_line(entry)) goto give_up;
            left = PyUnicode_Substring(entry, 0, cut);
            if (left == NULL) goto fail;
            right = PyUnicode_Substring(entry, cut + 1, length);
            if (right == NULL) {
                Py_DECREF(left);
                goto fail;
            }
        } else {
            if (!PyList_CheckExact(entry) || PyList_GET_SIZE(entry) != 2) goto give_up;
            left = exact_str(PyList_GET_ITEM(entry, 0));
            right = exact_str(PyList_GET_ITEM(entry, 1));
            if (left == NULL || right == NULL) goto give_up;
            Py_INCREF(left);
            Py_INCREF(right);
        }
        PyList_SET_ITEM(lefts, i, left);
        PyList_SET_ITEM(rights, i, right);
    }
    return Py_BuildValue("(NN)", lefts, rights);
give_up:
    Py_DECREF(lefts);
    Py_DECREF(rights);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(lefts);
    Py_XDECREF(rights);
    return NULL;
}

/* merge_ids(vocab, lefts, rights, prefix) -> (left_ids, right_ids, merged_ids, growing) or None
 *
 * polytok.models._bpe_merges.merge_ids for the usual case: the vocabulary's value for each
 * left part, right part and merged token (left + right without its leading `prefix`), and
 * whether no right part is `prefix` itself. None (the pure function then runs, and names
 * the missing token) when a part is not an exact str, a token is missing, `prefix` is not
 * ASCII, a right part does not start with a non-empty `prefix`, or the lists differ in length. HF tokenizers 0.23.3,
 * tokenizers/src/models/bpe/model.rs (BpeBuilder::build). */
static PyObject *merge_ids(PyObject *self, PyObject *args) {
    PyObject *vocab, *lefts, *rights, *prefix;
    if (!PyArg_ParseTuple(args, "O!O!O!U:merge_ids", &PyDict_Type, &vocab, &PyList_Type, &lefts,
                          &PyList_Type, &rights, &prefix))
        return NULL;
    /* a non-ASCII prefix: the pure function measures it in UTF-8 bytes (and may refuse it) */
    if (!PyDict_CheckExact(vocab) || !PyUnicode_CheckExact(prefix) || !PyUnicode_IS_ASCII(prefix))
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(lefts);
    if (PyList_GET_SIZE(rights) != n) Py_RETURN_NONE;
    Py_ssize_t skip = PyUnicode_GET_LENGTH(prefix);
    PyObject *left_ids = PyList_New(n);
    PyObject *right_ids = left_ids == NULL ? NULL : PyList_New(n);
    PyObject *merged_ids = right_ids == NULL ? NULL : PyList_New(n);
    if (merged_ids == NULL) goto fail;
    int growing = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* a vocabulary key with its own __eq__ could run Python code during a lookup:
         * every object used after a lookup is held, and the list sizes checked again */
        if (i >= PyList_GET_SIZE(lefts) || i >= PyList_GET_SIZE(rights)) goto give_up;
        PyObject *left = exact_str(PyList_GET_ITEM(lefts, i));
        PyObject *right = exact_str(PyList_GET_ITEM(rights, i));
        if (left == NULL || right == NULL) goto give_up;
        Py_INCREF(left);
        Py_INCREF(right);
        PyObject *merged = NULL, *a = NULL, *b = NULL, *m = NULL;
        a = PyDict_GetItemWithError(vocab, left);
        Py_XINCREF(a);
        if (a != NULL) {
            b = PyDict_GetItemWithError(vocab, right);
            Py_XINCREF(b);
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(right);
        int state = a != NULL && b != NULL ? 1 : (PyErr_Occurred() ? -1 : 0);
        if (state == 1) {
            if (skip == 0) {
                merged = PyUnicode_Concat(left, right);
            } else {
                Py_ssize_t match = PyUnicode_Tailmatch(right, prefix, 0, skip, -1);
                if (match == 1) {
                    PyObject *tail = PyUnicode_Substring(right, skip, length);
                    merged = tail == NULL ? NULL : PyUnicode_Concat(left, tail);
                    Py_XDECREF(tail);
                }
                if (match == 0) state = 0;
            }
            if (state == 1 && merged == NULL) state = -1;
        }
        /* with the prefix matched, a right part no longer than it is the prefix itself */
        if (state == 1 && length == skip) growing = 0;
        if (state == 1) {
            m = PyDict_GetItemWithError(vocab, merged);
            Py_XINCREF(m);
            if (m == NULL) state = PyErr_Occurred() ? -1 : 0;
        }
        Py_XDECREF(merged);
        Py_DECREF(left);
        Py_DECREF(right);
        if (state != 1) {
            Py_XDECREF(a);
            Py_XDECREF(b);
            if (state < 0) goto fail;
            goto give_up;
        }
        PyList_SET_ITEM(left_ids, i, a);
        PyList_SET_ITEM(right_ids, i, b);
        PyList_SET_ITEM(merged_ids, i, m);
    }
    return Py_BuildValue("(NNNO)", left_ids, right_ids, merged_ids, growing ? Py_True : Py_False);
give_up:
    Py_DECREF(left_ids);
    Py_DECREF(right_ids);
    Py_DECREF(merged_ids);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(left_ids);
    Py_XDECREF(right_ids);
    Py_XDECREF(merged_ids);
    return NULL;
}

/* -- json_merge_ids: json_merges and merge_ids in one pass, without a str per part ---------- */

/* A run of code points of a str: data[start:end] of the given kind. */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t start, end;
} Span;

typedef struct {
    uint64_t hash;
    PyObject *key;   /* borrowed from the vocabulary: no Python code runs while the table lives */
    PyObject *value; /* borrowed */
} VocabEntry;

typedef struct {
    uint32_t *slots; /* 1 + entry index, 0 empty */
    VocabEntry *entries;
    uint64_t mask;
} VocabTable;

static uint64_t span_hash(uint64_t h, Span span) {
    for (Py_ssize_t k = span.start; k < span.end; k++) {
        h ^= (uint64_t)PyUnicode_READ(span.kind, span.data, k);
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static uint64_t hash_finish(uint64_t h) {
    h ^= h >> 29;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    return h ^ (h >> 32);
}

#define HASH_SEED UINT64_C(0xcbf29ce484222325)

/* Whether the str `key` spells `a` then `b`, code point for code point. */
static int key_spells(PyObject *key, Span a, Span b) {
    Py_ssize_t la = a.end - a.start, lb = b.end - b.start;
    if (PyUnicode_GET_LENGTH(key) != la + lb) return 0;
    int kind = PyUnicode_KIND(key);
    const void *data = PyUnicode_DATA(key);
    for (Py_ssize_t k = 0; k < la; k++)
        if (PyUnicode_READ(kind, data, k) != PyUnicode_READ(a.kind, a.data, a.start + k)) return 0;
    for (Py_ssize_t k = 0; k < lb; k++)
        if (PyUnicode_READ(kind, data, la + k) != PyUnicode_READ(b.kind, b.data, b.start + k)) return 0;
    return 1;
}

/* The vocabulary's value for the text `a` + `b`, borrowed, or NULL. */
static PyObject *table_find(const VocabTable *table, Span a, Span b) {
    uint64_t h = hash_finish(span_hash(span_hash(HASH_SEED, a), b));
    for (uint64_t i = h & table->mask;; i = (i + 1) & table->mask) {
        uint32_t slot = table->slots[i];
        if (slot == 0) return NULL;
        const VocabEntry *entry = &table->entries[slot - 1];
        if (entry->hash == h && key_spells(entry->key, a, b)) return entry->value;
    }
}

/* The table of `vocab` (a dict): 1, 0 if a key is not an exact str, -1 out of memory. */
static int table_build(VocabTable *table, PyObject *vocab) {
    Py_ssize_t n = PyDict_GET_SIZE(vocab);
    uint64_t capacity = 16;
    while (capacity < (uint64_t)n * 2) capacity <<= 1;
    table->mask = capacity - 1;
    table->slots = PyMem_Calloc((size_t)capacity, sizeof(uint32_t));
    table->entries = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(VocabEntry));
    if (table->slots == NULL || table->entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t pos = 0, count = 0;
    PyObject *key, *value;
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || count >= n) return 0;
        Span whole = {PyUnicode_KIND(key), PyUnicode_DATA(key), 0, PyUnicode_GET_LENGTH(key)};
        uint64_t h = hash_finish(span_hash(HASH_SEED, whole));
        uint64_t i = h & table->mask;
        while (table->slots[i] != 0) i = (i + 1) & table->mask; /* dict keys are distinct */
        table->entries[count] = (VocabEntry){h, key, value};
        table->slots[i] = (uint32_t)(++count);
    }
    return 1;
}

static void table_free(VocabTable *table) {
    PyMem_Free(table->slots);
    PyMem_Free(table->entries);
}

/* json_merge_ids(vocab, raw, prefix) -> (left_ids, right_ids, merged_ids, growing) or None
 *
 * merge_ids(vocab, *json_merges(raw), prefix) in one pass: each merge's parts are looked up
 * where they lie in the entry (a hash table of the vocabulary's keys by code point), so no str
 * is made for a part or a merged token. None exactly when one of the two would answer None
 * (the pure functions then read the list again), and when a vocabulary key is not an exact str. */
static PyObject *json_merge_ids(PyObject *self, PyObject *args) {
    PyObject *vocab, *raw, *prefix;
    if (!PyArg_ParseTuple(args, "O!O!U:json_merge_ids", &PyDict_Type, &vocab, &PyList_Type, &raw, &prefix))
        return NULL;
    if (!PyDict_CheckExact(vocab) || !PyList_CheckExact(raw) || !PyUnicode_CheckExact(prefix)
        || !PyUnicode_IS_ASCII(prefix) || PyDict_GET_SIZE(vocab) >= (Py_ssize_t)UINT32_MAX)
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(raw);
    if (n == 0) Py_RETURN_NONE;
    Py_ssize_t skip = PyUnicode_GET_LENGTH(prefix);
    const char *prefix_text = (const char *)PyUnicode_DATA(prefix);
    /* every object is made before the table: from there on nothing allocates, so no Python
     * code (a collection's finalizer) can run and change the vocabulary under the table */
    PyObject *left_ids = PyList_New(n);
    PyObject *right_ids = left_ids == NULL ? NULL : PyList_New(n);
    PyObject *merged_ids = right_ids == NULL ? NULL : PyList_New(n);
    VocabTable table = {NULL, NULL, 0};
    if (merged_ids == NULL) goto fail;
    int built = table_build(&table, vocab);
    if (built < 0) goto fail;
    if (built == 0) goto give_up;
    int legacy = PyUnicode_CheckExact(PyList_GET_ITEM(raw, 0));
    int growing = 1;
    Span none = {PyUnicode_1BYTE_KIND, "", 0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *entry = PyList_GET_ITEM(raw, i);
        Span left, right;
        if (legacy) {
            if (!PyUnicode_CheckExact(entry)) goto give_up;
            Py_ssize_t length = PyUnicode_GET_LENGTH(entry);
            int kind = PyUnicode_KIND(entry);
            const void *data = PyUnicode_DATA(entry);
            Py_ssize_t cut = -1;
            for (Py_ssize_t k = 0; k < length; k++) {
                if (PyUnicode_READ(kind, data, k) != ' ') continue;
                if (cut >= 0) goto give_up; /* a second space */
                cut = k;
            }
            if (cut < 0 || is_version_line(entry)) goto give_up;
            left = (Span){kind, data, 0, cut};
            right = (Span){kind, data, cut + 1, length};
        } else {
            if (!PyList_CheckExact(entry) || PyList_GET_SIZE(entry) != 2) goto give_up;
            PyObject *a = PyList_GET_ITEM(entry, 0), *b = PyList_GET_ITEM(entry, 1);
            if (!PyUnicode_CheckExact(a) || !PyUnicode_CheckExact(b)) goto give_up;
            left = (Span){PyUnicode_KIND(a), PyUnicode_DATA(a), 0, PyUnicode_GET_LENGTH(a)};
            right = (Span){PyUnicode_KIND(b), PyUnicode_DATA(b), 0, PyUnicode_GET_LENGTH(b)};
        }
        Span tail = right;
        if (skip > 0) { /* the right part must start with the prefix, which the merged token drops */
            if (right.end - right.start < skip) goto give_up;
            for (Py_ssize_t k = 0; k < skip; k++)
                if (PyUnicode_READ(right.kind, right.data, right.start + k) != (Py_UCS4)(unsigned char)prefix_text[k])
                    goto give_up;
            tail.start += skip;
        }
        if (tail.start == tail.end) growing = 0;
        PyObject *a = table_find(&table, left, none);
        PyObject *b = a == NULL ? NULL : table_find(&table, right, none);
        PyObject *m = b == NULL ? NULL : table_find(&table, left, tail);
        if (m == NULL) goto give_up;
        PyList_SET_ITEM(left_ids, i, Py_NewRef(a));
        PyList_SET_ITEM(right_ids, i, Py_NewRef(b));
        PyList_SET_ITEM(merged_ids, i, Py_NewRef(m));
    }
    table_free(&table);
    return Py_BuildValue("(NNNO)", left_ids, right_ids, merged_ids, growing ? Py_True : Py_False);
give_up:
    table_free(&table);
    Py_DECREF(left_ids);
    Py_DECREF(right_ids);
    Py_DECREF(merged_ids);
    Py_RETURN_NONE;
fail:
    table_free(&table);
    Py_XDECREF(left_ids);
    Py_XDECREF(right_ids);
    Py_XDECREF(merged_ids);
    return NULL;
}

/* 10^k as the correctly rounded f64, for k in 0..308 (filled at import). */
static double pow10_table[309];

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 u128;

/* The shortest decimal digits of the positive double `value`, as Python's repr finds them
 * (David Gay's dtoa, mode 0: the fewest significant digits that read back as `value`, and
 * among those the nearest, ties to even), for the doubles where exact 128-bit integer
 * arithmetic suffices: normal, below 2^52, with the last digit at most 21 places after the
 * point (every double from about 1e-5 up). 1 with *digits and *places (value ~ digits /
 * 10^places, places < 0 for a power of ten above the units), or 0 (dtoa is asked instead).
 *
 * With value = m / 2^s, the doubles that read back as it are those within half an ulp either
 * side (a quarter below a power of two), the bounds themselves when m is even. In units of
 * 2^-(s+2) these bounds are the integers lo and hi; a decimal d / 10^j reads back when
 * lo * 10^j <= d * 2^(s+2) <= hi * 10^j. */
/* 10^k as a 128-bit integer, for k in 0..38 (filled at import). */
static u128 pow10_wide[39];

/* The decimals with `j` places that read back (see shortest_digits): 1 with the first and last
 * in *a and *b and the nearest to the value in *c (ties to even), or 0 if there is none. */
static int decimals_at(int j, int shift, u128 lo, u128 center, u128 hi, int inclusive, u128 *a, u128 *b,
                       u128 *c) {
    u128 low, high, mid, first, last, near, rest, half;
    if (j >= 0) {
        u128 mask = ((u128)1 << shift) - 1;
        low = lo * pow10_wide[j];
        high = hi * pow10_wide[j];
        mid = center * pow10_wide[j];
        first = (low >> shift) + ((low & mask) != 0 || !inclusive);
        last = (high >> shift) - ((high & mask) == 0 && !inclusive);
        near = mid >> shift;
        rest = mid & mask;
        half = (u128)1 << (shift - 1);
    } else {
        u128 den = pow10_wide[-j] << shift;
        first = lo / den + (lo % den != 0 || !inclusive);
        last = hi / den - (hi % den == 0 && !inclusive);
        near = center / den;
        rest = center % den;
        half = den / 2; /* den is even */
    }
    if (first > last || last == 0) return 0;
    if (rest > half || (rest == half && (near & 1))) near++;
    *a = first;
    *b = last;
    *c = near;
    return 1;
}

/* Whether 10^e <= m / 2^s, exactly, for -5 <= e <= 15 and 1 <= s <= 118. */
static int pow10_at_most(int e, uint64_t m, int s) {
    if (e < 0) return (u128)m * pow10_wide[-e] >= (u128)1 << s;
    if (s > 70) return 0; /* m / 2^s < 2^-17 */
    return (u128)m >= pow10_wide[e] << s;
}

/* The doubles that read back as the positive normal `value` = m / 2^s (s in 1..118), in units of
 * 2^-shift (see shortest_digits); 0 outside that range. */
typedef struct {
    uint64_t m;
    int s, shift, inclusive;
    u128 lo, center, hi;
} Bounds;

static int double_bounds(double value, Bounds *out) {
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    int biased = (int)((bits >> 52) & 0x7FF);
    uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    if (biased == 0 || biased == 0x7FF || (bits >> 63) != 0) return 0;
    int s = 1075 - biased; /* value = m / 2^s */
    if (s < 1 || s + 2 > 120) return 0;
    out->m = m;
    out->s = s;
    out->shift = s + 2;
    out->center = (u128)m << 2;
    out->lo = out->center - (m == (UINT64_C(1) << 52) && biased > 1 ? 1 : 2);
    out->hi = out->center + 2;
    out->inclusive = (m & 1) == 0;
    return 1;
}

static int shortest_digits(double value, uint64_t *digits, int *places) {
    Bounds k;
    if (!double_bounds(value, &k)) return 0;
    uint64_t m = k.m;
    int s = k.s, shift = k.shift, inclusive = k.inclusive;
    u128 lo = k.lo, center = k.center, hi = k.hi;
    /* value < 10^(exponent10 + 1): one digit there is the coarsest precision worth trying, and
     * 17 significant digits always read back; more places mean more digits, so the fewest
     * places that have a decimal are found by bisection */
    if (!pow10_at_most(-5, m, s)) return 0;
    int exponent10 = -5;
    while (exponent10 < 15 && pow10_at_most(exponent10 + 1, m, s)) exponent10++;
    int coarse = -exponent10 - 1, fine = 16 - exponent10;
    if (fine > 21 || coarse < -38) return 0;
    u128 a, b, c;
    if (!decimals_at(fine, shift, lo, center, hi, inclusive, &a, &b, &c)) return 0;
    while (coarse < fine) {
        int j = coarse + (fine - coarse) / 2;
        if (decimals_at(j, shift, lo, center, hi, inclusive, &a, &b, &c)) fine = j;
        else coarse = j + 1;
    }
    decimals_at(fine, shift, lo, center, hi, inclusive, &a, &b, &c);
    u128 d = c < a ? a : c > b ? b : c;
    int at = fine;
    while (d % 10 == 0) {
        d /= 10;
        at--;
    }
    if (d > UINT64_MAX) return 0;
    *digits = (uint64_t)d;
    *places = at;
    return 1;
}

/* Whether the decimal digits / 10^places (digits > 0 not a multiple of 10, places in 1..21) is
 * the shortest repr of the double it reads as: 1 with that double in *value, or 0 (not shown, so
 * the caller reads the text as Python does and finds the double's shortest digits). The double is
 * found among the neighbours of a quotient at most two ulps off, as the one whose read-back
 * interval holds the decimal; it is the shortest repr when no decimal with fewer places reads back
 * and it is the nearest of those with as many places (shortest_digits's rule). */
static int decimal_is_shortest(uint64_t digits, int places, double *value) {
    if (digits == 0 || digits % 10 == 0 || places < 1 || places > 21) return 0;
    double guess = (double)digits / pow10_table[places];
    double below = guess, above = guess;
    for (int step = 0; step < 5; step++) {
        double candidate = step == 0 ? guess : (step & 1) ? (below = nextafter(below, 0.0))
                                                          : (above = nextafter(above, INFINITY));
        Bounds k;
        u128 a, b, c;
        if (!double_bounds(candidate, &k)
            || !decimals_at(places, k.shift, k.lo, k.center, k.hi, k.inclusive, &a, &b, &c)
            || digits < a || digits > b)
            continue;
        u128 shorter_a, shorter_b, shorter_c;
        if (decimals_at(places - 1, k.shift, k.lo, k.center, k.hi, k.inclusive, &shorter_a, &shorter_b, &shorter_c))
            return 0;
        if ((c < a ? a : c > b ? b : c) != digits) return 0;
        *value = candidate;
        return 1;
    }
    return 0;
}
#endif

/* significand as f64, multiplied or divided by 10^|power| (power <= 308), dividing by 1e308
 * first while |power| is past the table: serde_json's two roundings. */
static double serde_scale(uint64_t significand, long power, int negative) {
    double result = (double)significand;
    for (;;) {
        if (power > -309 && power < 309) {
            result = power >= 0 ? result * pow10_table[power] : result / pow10_table[-power];
            break;
        }
        if (result == 0.0) break;
        result /= 1e308;
        power += 308;
    }
    return negative ? -result : result;
}

/* The f64 serde_json reads from the repr of `value` (a finite double: Python's repr, shortest
 * digits with ".0" after a whole number, which serde_json reads as one more digit), as
 * polytok.models.unigram.serde_f64: the repr's digits as one integer, converted to f64, then
 * multiplied or divided by 10^|power|, dividing by 1e308 first while |power| is past the
 * table. 1 with *out set, or 0 for a repr this does not read (then the pure function runs). */
static int serde_double(double value, double *out) {
    if (value == 0.0) { /* "0.0" or "-0.0" */
        *out = value;
        return 1;
    }
#ifdef __SIZEOF_INT128__
    uint64_t shortest;
    int places;
    if (shortest_digits(fabs(value), &shortest, &places)) {
        /* repr's text of digits * 10^-places: where the point falls (decpt) decides between
         * "d.ddde-XX", "0.000ddd", "ddd.ddd" and "ddd000.0", whose one extra "0" is a digit too */
        int count = 1;
        for (uint64_t rest = shortest; rest >= 10; rest /= 10) count++;
        int decpt = count - places;
        uint64_t significand = shortest;
        long power = -(long)places;
        if (decpt > -4 && decpt <= 16 && places <= 0) {
            for (int k = 0; k < 1 - places; k++) significand *= 10;
            power = -1;
        }
        *out = serde_scale(significand, power, value < 0);
        return 1;
    }
#endif
    char *text = PyOS_double_to_string(value, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) return -1;
    const char *p = text;
    int negative = 0, digits = 0, ok = 1;
    if (*p == '-') {
        negative = 1;
        p++;
    }
    uint64_t significand = 0;
    long power = 0;
    const char *start = p;
    for (; *p >= '0' && *p <= '9'; p++) {
        significand = significand * 10 + (uint64_t)(*p - '0');
        if (significand != 0) digits++; /* leading zeros do not count */
    }
    int any_digit = p > start;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, power--) {
            significand = significand * 10 + (uint64_t)(*p - '0');
            if (significand != 0) digits++;
        }
    }
    if (*p == 'e') {
        p++;
        int exp_negative = *p == '-';
        if (*p == '-' || *p == '+') p++;
        long exponent = 0;
        if (!(*p >= '0' && *p <= '9')) ok = 0;
        for (; *p >= '0' && *p <= '9' && exponent < 100000; p++) exponent = exponent * 10 + (*p - '0');
        power += exp_negative ? -exponent : exponent;
    }
    /* a shortest repr has at most 17 digits; anything else (inf, nan) is not read here */
    if (*p != '\0' || !any_digit || digits > 19) ok = 0;
    PyMem_Free(text);
    if (!ok) return 0;
    if (power > 308) return 0; /* not reached: a finite double's repr exponent is at most 308 */
    *out = serde_scale(significand, power, negative);
    return 1;
}

/* One score as serde_f64 reads it: 1 (in *value), 0 when the pure function must read it (any item
 * but an exact float or int, an int past an f64, a float serde_double leaves), -1 on an error. */
static int score_value(PyObject *item, double *value) {
    if (PyFloat_CheckExact(item)) return serde_double(PyFloat_AS_DOUBLE(item), value);
    if (!PyLong_CheckExact(item)) return 0;
    *value = PyLong_AsDouble(item);
    if (*value == -1.0 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* serde_f64s(scores) -> list of float, or None
 *
 * polytok.models.unigram.serde_f64 of each item of `scores`, a list of exact ints and finite
 * floats; None (the pure function then reads each) for any other item or an int past an f64. */
static PyObject *serde_f64s(PyObject *self, PyObject *scores) {
    if (!PyList_CheckExact(scores)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(scores);
    PyObject *result = PyList_New(n);
    if (result == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* nothing here runs Python code, so the list keeps its size */
        PyObject *item = PyList_GET_ITEM(scores, i);
        double value;
        int state = score_value(item, &value);
        if (state < 0) goto fail;
        if (state == 0) goto give_up;
        PyObject *number = PyFloat_FromDouble(value);
        if (number == NULL) goto fail;
        PyList_SET_ITEM(result, i, number);
    }
    return result;
give_up:
    Py_DECREF(result);
    Py_RETURN_NONE;
fail:
    Py_DECREF(result);
    return NULL;
}

/* unigram_vocab(raw) -> (pieces, scores), or None
 *
 * A tokenizer.json Unigram "vocab", a list of [piece, score] pairs, read in one pass: each entry
 * an exact list of two items, a str and an exact int or finite float; each score as serde_f64s
 * reads it. None (the pure checks then run and name the entry at fault) for anything else. */
static PyObject *unigram_vocab(PyObject *self, PyObject *raw) {
    if (!PyList_CheckExact(raw)) Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(raw);
    PyObject *pieces = PyList_New(n);
    PyObject *scores = PyList_New(n);
    if (pieces == NULL || scores == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        /* nothing here runs Python code, so the lists keep their sizes */
        PyObject *entry = PyList_GET_ITEM(raw, i);
        if (!PyList_CheckExact(entry) || PyList_GET_SIZE(entry) != 2) goto give_up;
        PyObject *piece = PyList_GET_ITEM(entry, 0);
        PyObject *score = PyList_GET_ITEM(entry, 1);
        if (!PyUnicode_CheckExact(piece)) goto give_up;
        if (PyFloat_CheckExact(score) && !isfinite(PyFloat_AS_DOUBLE(score))) goto give_up;
        double value;
        int state = score_value(score, &value);
        if (state < 0) goto fail;
        if (state == 0) goto give_up;
        double given = PyFloat_CheckExact(score) ? PyFloat_AS_DOUBLE(score) : 0.0;
        PyObject *number;
        if (PyFloat_CheckExact(score) && memcmp(&value, &given, sizeof value) == 0) {
            number = score; /* read back bit for bit: the file's float itself */
            Py_INCREF(number);
        } else {
            number = PyFloat_FromDouble(value);
            if (number == NULL) goto fail;
        }
        Py_INCREF(piece);
        PyList_SET_ITEM(pieces, i, piece);
        PyList_SET_ITEM(scores, i, number);
    }
    PyObject *result = PyTuple_Pack(2, pieces, scores);
    Py_DECREF(pieces);
    Py_DECREF(scores);
    return result;
give_up:
    Py_DECREF(pieces);
    Py_DECREF(scores);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(pieces);
    Py_XDECREF(scores);
    return NULL;
}

/* -- a tokenizer.json's Unigram vocab, read from the file's bytes -------------------------- */

/* JSON as Python's json module reads it (RFC 8259; Lib/json/decoder.py, Modules/_json.c): the
 * same white space, strings, numbers. Only the `model.vocab` array is read here; the rest of the
 * text is walked just far enough to find it, and json.loads reads it (with the array cut out). */
typedef struct {
    const unsigned char *s; /* a bytes object's: s[n] is its terminating NUL, where every byte loop stops */
    Py_ssize_t n;
} JsonText;

/* Per byte, two flags: 1 for JSON white space; 2 for what ends a run of plain string bytes ('"',
 * '\\' and the control characters json refuses in a string, NUL and the white space among them). */
static unsigned char json_class[256];

static Py_ssize_t json_space(const JsonText *j, Py_ssize_t at) {
    while (json_class[j->s[at]] & 1) at++;
    return at;
}

/* The string whose '"' is at `at`: the index after its closing quote, or -1 (unterminated, or a
 * control character in it, which json refuses); *escaped: whether it holds a backslash. */
static Py_ssize_t json_string_end(const JsonText *j, Py_ssize_t at, int *escaped) {
    *escaped = 0;
    for (at++;; at++) {
        while (!(json_class[j->s[at]] & 2)) at++;
        unsigned char c = j->s[at];
        if (c == '"') return at + 1;
        if (c != '\\' || at + 1 >= j->n) return -1; /* a control character, the end of the text */
        *escaped = 1;
        at++; /* the escaped character, a quote included */
    }
}

/* The index after the value starting at `at`, or -1. Lenient: it only balances brackets outside
 * strings (json.loads checks the text it walks through). */
static Py_ssize_t json_skip(const JsonText *j, Py_ssize_t at) {
    Py_ssize_t depth = 0;
    while (at < j->n) {
        unsigned char c = j->s[at];
        if (c == '"') {
            int escaped;
            at = json_string_end(j, at, &escaped);
            if (at < 0 || depth == 0) return at;
            continue;
        }
        if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            if (depth == 0) return at; /* a number or literal ends at its container's end */
            if (--depth == 0) return at + 1;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
            return at;
        }
        at++;
    }
    return depth == 0 ? at : -1;
}

/* The next member of the object being walked; `*at` is just after its '{' (`first`) or after a
 * member's value. 1: the key's text (between its quotes) is [*key, *key_end), *escaped if it holds
 * a backslash, and *at is the value's first byte; 0: the object ended, *at just after its '}';
 * -1: not an object this walk reads. */
static int json_member(const JsonText *j, Py_ssize_t *at, int first, Py_ssize_t *key, Py_ssize_t *key_end,
                       int *escaped) {
    Py_ssize_t p = json_space(j, *at);
    if (p >= j->n) return -1;
    if (j->s[p] == '}') {
        *at = p + 1;
        return 0;
    }
    if (!first) {
        if (j->s[p] != ',') return -1;
        p = json_space(j, p + 1);
    }
    if (p >= j->n || j->s[p] != '"') return -1;
    Py_ssize_t end = json_string_end(j, p, escaped);
    if (end < 0) return -1;
    *key = p + 1;
    *key_end = end - 1;
    p = json_space(j, end);
    if (p >= j->n || j->s[p] != ':') return -1;
    *at = json_space(j, p + 1);
    return 1;
}

static int json_key_is(const JsonText *j, Py_ssize_t key, Py_ssize_t key_end, const char *name) {
    size_t size = strlen(name);
    return (size_t)(key_end - key) == size && memcmp(j->s + key, name, size) == 0;
}

/* s[0:size] decoded as Python's strict UTF-8 decoder decodes it, in two passes (its code points'
 * count and largest, checked as utf8_valid checks them; then written straight into the str):
 * the decoder's general path grows its result as it goes, several times the cost for the short
 * non-ASCII pieces of a vocabulary. A new str, NULL with no error for bytes the decoder refuses. */
static PyObject *utf8_str(const unsigned char *s, Py_ssize_t size) {
    Py_ssize_t length = 0;
    Py_UCS4 largest = 0;
    for (Py_ssize_t i = 0; i < size; length++) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        Py_ssize_t follow;
        unsigned char low = 0x80, high = 0xBF; /* the range of the second byte */
        Py_UCS4 cp;
        if (c >= 0xC2 && c <= 0xDF) {
            follow = 1;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            follow = 2;
            cp = c & 0x0F;
            if (c == 0xE0) low = 0xA0;
            if (c == 0xED) high = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            follow = 3;
            cp = c & 0x07;
            if (c == 0xF0) low = 0x90;
            if (c == 0xF4) high = 0x8F;
        } else {
            return NULL;
        }
        if (size - i - 1 < follow || s[i + 1] < low || s[i + 1] > high) return NULL;
        for (Py_ssize_t k = 1; k <= follow; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return NULL;
            cp = cp << 6 | (s[i + k] & 0x3F);
        }
        if (cp > largest) largest = cp;
        i += follow + 1;
    }
    PyObject *text = PyUnicode_New(length, largest < 0x80 ? 0x7F : largest);
    if (!text) return NULL;
    if (largest < 0x80) {
        memcpy(PyUnicode_DATA(text), s, (size_t)size);
        return text;
    }
    int kind = PyUnicode_KIND(text);
    void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0, k = 0; i < size; k++) {
        unsigned char c = s[i];
        Py_UCS4 cp;
        if (c < 0x80) {
            cp = c;
            i += 1;
        } else if (c < 0xE0) {
            cp = (Py_UCS4)(c & 0x1F) << 6 | (s[i + 1] & 0x3F);
            i += 2;
        } else if (c < 0xF0) {
            cp = (Py_UCS4)(c & 0x0F) << 12 | (Py_UCS4)(s[i + 1] & 0x3F) << 6 | (s[i + 2] & 0x3F);
            i += 3;
        } else {
            cp = (Py_UCS4)(c & 0x07) << 18 | (Py_UCS4)(s[i + 1] & 0x3F) << 12 | (Py_UCS4)(s[i + 2] & 0x3F) << 6
                 | (s[i + 3] & 0x3F);
            i += 4;
        }
        PyUnicode_WRITE(kind, data, k, cp);
    }
    return text;
}

/* The string whose '"' is at `at` (ending just before `end`) as json reads it: the UTF-8 text
 * itself, or, when it holds an escape, json.decoder.scanstring's answer (`unescape`). A new str,
 * NULL with no error for a string json refuses, NULL with an error on failure. */
static PyObject *json_string(const JsonText *j, Py_ssize_t at, Py_ssize_t end, int escaped, PyObject *unescape) {
    if (!escaped) return utf8_str(j->s + at + 1, end - at - 2);
    PyObject *text = PyUnicode_DecodeUTF8((const char *)j->s + at + 1, end - at - 1, NULL);
    if (text == NULL) goto done;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text); /* up to the closing quote, which it holds */
    PyObject *read = PyObject_CallFunction(unescape, "On", text, (Py_ssize_t)0);
    Py_SETREF(text, NULL);
    if (read == NULL) goto done;
    if (PyTuple_CheckExact(read) && PyTuple_GET_SIZE(read) == 2 && PyUnicode_CheckExact(PyTuple_GET_ITEM(read, 0))
        && PyLong_CheckExact(PyTuple_GET_ITEM(read, 1)) && PyLong_AsSsize_t(PyTuple_GET_ITEM(read, 1)) == length) {
        text = Py_NewRef(PyTuple_GET_ITEM(read, 0));
    }
    Py_DECREF(read);
    return text; /* NULL: scanstring stopped before the closing quote */
done:
    if (text == NULL && PyErr_ExceptionMatches(PyExc_ValueError)) PyErr_Clear(); /* UnicodeDecodeError, JSONDecodeError */
    return text;
}

/* The number at `at` as json reads it and serde_f64s then reads that: 1 with *value and *end (the
 * index after it), 0 for anything else (not a JSON number, an int of more than 18 digits, a float
 * past an f64, a repr serde_double leaves to Python), -1 on an error. */
static int json_score(const JsonText *j, Py_ssize_t at, double *value, Py_ssize_t *end) {
    const unsigned char *s = j->s;
    Py_ssize_t p = at;
    int negative = s[p] == '-';
    p += negative;
    /* the grammar, and the significant digits as one integer while there are at most 19 */
    uint64_t digits = 0;
    int count = 0, places = 0;
    Py_ssize_t whole = p;
    if (s[p] == '0') {
        p++;
    } else {
        for (; s[p] >= '0' && s[p] <= '9'; p++)
            if (++count <= 19) digits = digits * 10 + (uint64_t)(s[p] - '0');
    }
    if (p == whole) return 0;
    Py_ssize_t whole_end = p;
    int has_fraction = s[p] == '.';
    if (has_fraction) {
        Py_ssize_t first = ++p;
        for (; s[p] >= '0' && s[p] <= '9'; p++, places++) {
            if (count > 0 || s[p] != '0') count++;
            if (count <= 19) digits = digits * 10 + (uint64_t)(s[p] - '0');
        }
        if (p == first) return 0;
    }
    int has_exponent = s[p] == 'e' || s[p] == 'E';
    if (has_exponent) {
        p++;
        if (s[p] == '+' || s[p] == '-') p++;
        Py_ssize_t first = p;
        while (s[p] >= '0' && s[p] <= '9') p++;
        if (p == first) return 0;
    }
    *end = p;
    if (!has_fraction && !has_exponent) { /* json's int(text): at most 18 digits are exact in int64 */
        if (whole_end - whole > 18) return 0;
        *value = (double)(negative ? -(int64_t)digits : (int64_t)digits); /* rounded to nearest, as PyLong_AsDouble */
        return 1;
    }
#ifdef __SIZEOF_INT128__
    if (!has_exponent && count <= 19) {
        /* the text's digits over 10^places: when they are the shortest repr of the double json
         * reads, serde_double's answer comes from them (a repr with places after the point has
         * these digits), without reading the double first */
        while (digits != 0 && digits % 10 == 0 && places > 0) {
            digits /= 10;
            places--;
        }
        double read;
        if (decimal_is_shortest(digits, places, &read)) {
            *value = serde_scale(digits, -(long)places, negative);
            return 1;
        }
    }
#endif
    char text[64];
    if (p - at >= (Py_ssize_t)sizeof text) return 0;
    memcpy(text, s + at, (size_t)(p - at));
    text[p - at] = '\0';
    double read = PyOS_string_to_double(text, NULL, NULL); /* json's float(text): inf past an f64 */
    if (read == -1.0 && PyErr_Occurred()) return -1;
    if (!isfinite(read)) return 0;
    return serde_double(read, value);
}

/* The vocab array whose '[' is at `at`: each entry a [piece, score] pair appended to the lists.
 * 1 with *end after its ']', 0 for anything else, -1 on an error. */
static int json_vocab(const JsonText *j, Py_ssize_t at, PyObject *unescape, PyObject *pieces, PyObject *scores,
                      Py_ssize_t *end) {
    Py_ssize_t p = json_space(j, at + 1);
    if (p < j->n && j->s[p] == ']') {
        *end = p + 1;
        return 1;
    }
    for (;;) {
        if (p >= j->n || j->s[p] != '[') return 0;
        Py_ssize_t string_at = json_space(j, p + 1);
        if (string_at >= j->n || j->s[string_at] != '"') return 0;
        int escaped;
        Py_ssize_t string_end = json_string_end(j, string_at, &escaped);
        if (string_end < 0) return 0;
        p = json_space(j, string_end);
        if (p >= j->n || j->s[p] != ',') return 0;
        double value;
        Py_ssize_t number_end;
        int state = json_score(j, json_space(j, p + 1), &value, &number_end);
        if (state <= 0) return state;
        p = json_space(j, number_end);
        if (p >= j->n || j->s[p] != ']') return 0;
        PyObject *piece = json_string(j, string_at, string_end, escaped, unescape);
        if (piece == NULL) return PyErr_Occurred() ? -1 : 0;
        int failed = PyList_Append(pieces, piece);
        Py_DECREF(piece);
        if (failed) return -1;
        PyObject *number = PyFloat_FromDouble(value);
        if (number == NULL) return -1;
        failed = PyList_Append(scores, number);
        Py_DECREF(number);
        if (failed) return -1;
        p = json_space(j, p + 1);
        if (p < j->n && j->s[p] == ']') {
            *end = p + 1;
            return 1;
        }
        if (p >= j->n || j->s[p] != ',') return 0;
        p = json_space(j, p + 1);
    }
}

/* What json_walk reads: the vocab's entries, and the span of its array. */
typedef struct {
    PyObject *unescape, *pieces, *scores;
    Py_ssize_t start, end;
} VocabRead;

/* The object whose '{' is at `at`, walked for its one member `model` (level 0), and that object
 * for its one member `vocab` (level 1), read by json_vocab; every other member is skipped. 1 with
 * *end after the object, 0 for an object this walk does not read (the member missing or twice, or
 * any key with an escape, which could spell it), -1 on an error. */
static int json_walk(const JsonText *j, Py_ssize_t at, int level, VocabRead *read, Py_ssize_t *end) {
    static const char *const names[] = {"model", "vocab"};
    if (at >= j->n || j->s[at] != '{') return 0;
    Py_ssize_t p = at + 1, key, key_end;
    int escaped, found = 0;
    for (int first = 1;; first = 0) {
        int state = json_member(j, &p, first, &key, &key_end, &escaped);
        if (state < 0 || (state > 0 && escaped)) return 0;
        if (state == 0) break;
        if (!json_key_is(j, key, key_end, names[level])) {
            p = json_skip(j, p);
            if (p < 0) return 0;
            continue;
        }
        if (found) return 0;
        found = 1;
        if (level == 0) {
            state = json_walk(j, p, 1, read, &p);
        } else {
            if (p >= j->n || j->s[p] != '[') return 0;
            read->start = p;
            state = json_vocab(j, p, read->unescape, read->pieces, read->scores, &p);
            read->end = p;
        }
        if (state <= 0) return state;
    }
    *end = p;
    return found;
}

/* json_unigram_vocab(raw, unescape) -> (start, end, pieces, scores), or None
 *
 * The `model.vocab` of a tokenizer.json text (`raw`, UTF-8 bytes), read straight from the bytes
 * when it is a list of [piece, score] pairs: the pieces as json.loads reads them (`unescape` is
 * json.decoder.scanstring, for a piece with an escape) and the scores as serde_f64s reads the
 * numbers json.loads makes; [start, end) is the array's span. The caller has json.loads read the
 * text with that span cut out, so nothing here judges the rest of the file. None for anything
 * else: the member missing or repeated, an escaped key at either level, an entry that is not such
 * a pair, an unusual number (json.loads and the pure checks then read the whole file). */
static PyObject *json_unigram_vocab(PyObject *self, PyObject *args) {
    PyObject *raw, *unescape;
    if (!PyArg_ParseTuple(args, "SO", &raw, &unescape)) return NULL;
    JsonText j = {(const unsigned char *)PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw)};
    VocabRead read = {unescape, PyList_New(0), PyList_New(0), -1, -1};
    PyObject *result = NULL;
    Py_ssize_t end;
    if (read.pieces != NULL && read.scores != NULL) {
        int state = json_walk(&j, json_space(&j, 0), 0, &read, &end);
        if (state > 0 && json_space(&j, end) == j.n)
            result = Py_BuildValue("nnOO", read.start, read.end, read.pieces, read.scores);
        else if (state >= 0)
            result = Py_NewRef(Py_None);
    }
    Py_XDECREF(read.pieces);
    Py_XDECREF(read.scores);
    return result;
}

/* last_index(pieces, token) -> the last index of `token` in the list `pieces` of exact str, or -1;
 * None when `pieces` is not such a list (the pure scan then answers). */
static PyObject *last_index(PyObject *self, PyObject *args) {
    PyObject *pieces, *token;
    if (!PyArg_ParseTuple(args, "OO", &pieces, &token)) return NULL;
    if (!PyList_CheckExact(pieces) || !PyUnicode_CheckExact(token)) Py_RETURN_NONE;
    Py_ssize_t length = PyUnicode_GET_LENGTH(token);
    int kind = PyUnicode_KIND(token);
    const void *data = PyUnicode_DATA(token);
    for (Py_ssize_t i = PyList_GET_SIZE(pieces) - 1; i >= 0; i--) {
        /* nothing here runs Python code, so the list keeps its size */
        PyObject *item = PyList_GET_ITEM(pieces, i);
        if (item == token) return PyLong_FromSsize_t(i);
        if (!PyUnicode_CheckExact(item)) Py_RETURN_NONE;
        /* equal str have equal kinds: each is stored in the narrowest kind that holds it */
        if (PyUnicode_GET_LENGTH(item) == length && PyUnicode_KIND(item) == kind
            && memcmp(PyUnicode_DATA(item), data, (size_t)length * (size_t)kind) == 0)
            return PyLong_FromSsize_t(i);
    }
    return PyLong_FromLong(-1);
}

static PyMethodDef methods[] = {
    {"read_pieces", read_pieces, METH_VARARGS,
     "read_pieces(data, pos, end, pieces, scores, types) -> position after the ModelProto pieces read"},
    {"gguf_strings", gguf_strings, METH_VARARGS,
     "gguf_strings(data, pos, end, count, big_endian) -> (list of str, position), or None"},
    {"merge_pairs", merge_pairs, METH_O, "merge_pairs(lines) -> list of (left, right) as llama.cpp cuts them"},
    {"gguf_string_array_end", gguf_string_array_end, METH_VARARGS,
     "gguf_string_array_end(data, pos, end, count, big_endian) -> position after the checked strings, or None"},
    {"gguf_merges", gguf_merges, METH_VARARGS,
     "gguf_merges(data, count, big_endian) -> (lefts, rights) of the distinct merge lines, or None"},
    {"json_merges", json_merges, METH_O, "json_merges(raw) -> (lefts, rights) of a tokenizer.json merges list, or None"},
    {"merge_ids", merge_ids, METH_VARARGS,
     "merge_ids(vocab, lefts, rights, prefix) -> (left_ids, right_ids, merged_ids, growing), or None"},
    {"json_merge_ids", json_merge_ids, METH_VARARGS,
     "json_merge_ids(vocab, raw, prefix) -> merge_ids(vocab, *json_merges(raw), prefix) in one pass, or None"},
    {"serde_f64s", serde_f64s, METH_O, "serde_f64s(scores) -> the f64 serde_json reads for each score, or None"},
    {"last_index", last_index, METH_VARARGS,
     "last_index(pieces, token) -> the last index of token in a list of str (-1: none), or None"},
    {"json_unigram_vocab", json_unigram_vocab, METH_VARARGS,
     "json_unigram_vocab(raw, unescape) -> (start, end, pieces, scores) of a tokenizer.json's model.vocab, or None"},
    {"unigram_vocab", unigram_vocab, METH_O,
     "unigram_vocab(raw) -> (pieces, scores) of a tokenizer.json Unigram vocab, scores as serde_f64s reads them, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "wire", NULL, -1, methods};

PyMODINIT_FUNC PyInit_wire(void) {
    for (int c = 0; c < 0x20; c++) json_class[c] = 2;
    json_class['"'] = json_class['\\'] = 2;
    json_class[' '] |= 1;
    json_class['\n'] |= 1;
    json_class['\r'] |= 1;
    json_class['\t'] |= 1;
    char text[8];
    for (int k = 0; k < 309; k++) {
        PyOS_snprintf(text, sizeof text, "1e%d", k);
        pow10_table[k] = PyOS_string_to_double(text, NULL, NULL);
        if (pow10_table[k] == -1.0 && PyErr_Occurred()) return NULL;
    }
#ifdef __SIZEOF_INT128__
    pow10_wide[0] = 1;
    for (int k = 1; k < 39; k++) pow10_wide[k] = pow10_wide[k - 1] * 10;
#endif
    return PyModule_Create(&module);
}

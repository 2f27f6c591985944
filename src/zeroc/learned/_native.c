/* zeroc.learned._native: the learned codec's exact coder on fixed-width limbs.
 *
 * The same arithmetic as zeroc/learned/_coder.py and the generated code (spec/LEARNED_MODEL.md,
 * "Coder"): an encoder narrows low/den .. (low+rng)/den symbol by symbol, a decoder keeps the
 * payload's place x/R in the current interval and den, the product of the totals taken. Python
 * integers make each of those steps three or four allocations; here they are limb loops on
 * buffers reused across symbols, and a categorical's slot -> (start, freq) table is a C array,
 * so a symbol costs one call. Only the values a message holds are Python objects.
 *
 * Everything the tables hold is checked when a Table is built; the coder functions rely only
 * on 0 <= x < R (which each step keeps) and on bounds they check themselves.
 *
 * Why not GMP (gmpy2): the time went to one Python-level operation, allocation and dispatch per
 * integer step, not to the arithmetic on a few limbs; mpz objects would keep all three.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if !defined(__SIZEOF_INT128__)
#error "zeroc.learned._native needs a compiler with unsigned __int128 (the pure-Python coder runs without it)"
#endif

typedef unsigned __int128 u128;
typedef uint64_t limb;

/* ---- big naturals: little-endian limbs, n in use (d[n-1] != 0, or n == 0 for zero) ---- */

typedef struct {
    Py_ssize_t n, cap;
    limb *d;
    limb local[6];
} Big;

static void big_init(Big *a) { a->n = 0; a->cap = 6; a->d = a->local; }

static void big_free(Big *a) {
    if (a->d != a->local) PyMem_Free(a->d);
    big_init(a);
}

static int big_reserve(Big *a, Py_ssize_t n) {
    if (n <= a->cap) return 0;
    Py_ssize_t cap = a->cap;
    while (cap < n) cap *= 2;
    limb *d = PyMem_Malloc((size_t)cap * sizeof(limb));
    if (d == NULL) { PyErr_NoMemory(); return -1; }
    memcpy(d, a->d, (size_t)a->n * sizeof(limb));
    if (a->d != a->local) PyMem_Free(a->d);
    a->d = d;
    a->cap = cap;
    return 0;
}

static void big_trim(Big *a) { while (a->n && a->d[a->n - 1] == 0) a->n--; }

static int big_set_u64(Big *a, limb v) { a->d[0] = v; a->n = v != 0; return 0; }

static int big_copy(Big *dst, const Big *src) {
    if (big_reserve(dst, src->n) < 0) return -1;
    memcpy(dst->d, src->d, (size_t)src->n * sizeof(limb));
    dst->n = src->n;
    return 0;
}

/* a *= m */
static int big_mul(Big *a, limb m) {
    if (m == 0 || a->n == 0) { a->n = 0; return 0; }
    if (m == 1) return 0;
    if (big_reserve(a, a->n + 1) < 0) return -1;
    limb carry = 0;
    for (Py_ssize_t i = 0; i < a->n; i++) {
        u128 t = (u128)a->d[i] * m + carry;
        a->d[i] = (limb)t;
        carry = (limb)(t >> 64);
    }
    if (carry) a->d[a->n++] = carry;
    return 0;
}

/* a <<= bits */
static int big_shl(Big *a, Py_ssize_t bits) {
    if (a->n == 0 || bits == 0) return 0;
    Py_ssize_t w = bits / 64, s = bits % 64;
    if (big_reserve(a, a->n + w + 1) < 0) return -1;
    a->d[a->n + w] = 0;
    for (Py_ssize_t i = a->n - 1; i >= 0; i--) {
        limb v = a->d[i];
        if (s) {
            a->d[i + w + 1] |= v >> (64 - s);
            a->d[i + w] = v << s;
        } else {
            a->d[i + w] = v;
        }
    }
    memset(a->d, 0, (size_t)w * sizeof(limb));
    a->n += w + 1;
    big_trim(a);
    return 0;
}

/* a += b * m */
static int big_addmul(Big *a, const Big *b, limb m) {
    if (m == 0 || b->n == 0) return 0;
    Py_ssize_t n = (a->n > b->n ? a->n : b->n) + 1;
    if (big_reserve(a, n) < 0) return -1;
    for (Py_ssize_t i = a->n; i < n; i++) a->d[i] = 0;
    limb carry = 0;
    Py_ssize_t i = 0;
    for (; i < b->n; i++) {
        u128 t = (u128)b->d[i] * m + a->d[i] + carry;
        a->d[i] = (limb)t;
        carry = (limb)(t >> 64);
    }
    for (; carry && i < n; i++) {
        u128 t = (u128)a->d[i] + carry;
        a->d[i] = (limb)t;
        carry = (limb)(t >> 64);
    }
    a->n = n;
    big_trim(a);
    return 0;
}

/* a -= b * m, where a >= b * m */
static void big_submul(Big *a, const Big *b, limb m) {
    if (m == 0 || b->n == 0) return;
    limb borrow = 0;  /* what is still to subtract at limb i (product carry and borrows) */
    Py_ssize_t i = 0;
    for (; i < b->n; i++) {
        u128 p = (u128)b->d[i] * m + borrow;
        limb lo = (limb)p;
        borrow = (limb)(p >> 64) + (a->d[i] < lo);
        a->d[i] -= lo;
    }
    for (; borrow && i < a->n; i++) {
        limb lo = borrow;
        borrow = a->d[i] < lo;
        a->d[i] -= lo;
    }
    big_trim(a);
}

static int big_cmp(const Big *a, const Big *b) {
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (Py_ssize_t i = a->n - 1; i >= 0; i--)
        if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

static Py_ssize_t big_bits(const Big *a) {
    if (a->n == 0) return 0;
    return 64 * (a->n - 1) + (64 - __builtin_clzll(a->d[a->n - 1]));
}

/* Limb i of (a << s), 0 <= s < 64, for any i (0 outside). */
static inline limb shifted(const Big *a, Py_ssize_t i, int s) {
    limb hi = (i >= 0 && i < a->n) ? a->d[i] : 0;
    if (!s) return hi;
    limb lo = (i - 1 >= 0 && i - 1 < a->n) ? a->d[i - 1] : 0;
    return (hi << s) | (lo >> (64 - s));
}

/* q = u // v and u %= v, for u < v * 2^64 (so q fits a limb) and v > 0. The quotient limb is
 * estimated from the top limbs of the normalized operands (Knuth, TAOCP 4.3.1, algorithm D:
 * the estimate is never below q and at most 2 above), then corrected exactly. */
static limb big_divmod(Big *u, const Big *v) {
    if (big_cmp(u, v) < 0) return 0;
    Py_ssize_t m = v->n;
    int s = __builtin_clzll(v->d[m - 1]);
    limb v1 = shifted(v, m - 1, s);
    limb u2 = shifted(u, m, s), u1 = shifted(u, m - 1, s);
    limb qhat;
    if (u2 >= v1) {
        qhat = UINT64_MAX;
    } else {
        qhat = (limb)((((u128)u2 << 64) | u1) / v1);
    }
    /* u -= qhat * v in place over m + 1 limbs (the caller reserved them; u < v * 2^64 means u
     * has no more); a borrow out of the top means qhat was too large: add qhat * v back and
     * try qhat - 1 (at most twice). */
    Py_ssize_t n = u->n > m + 1 ? u->n : m + 1;
    limb *d = u->d;
    for (Py_ssize_t i = u->n; i < n; i++) d[i] = 0;
    for (;;) {
        limb borrow = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            u128 p = (i < m ? (u128)v->d[i] * qhat : 0) + borrow;
            limb lo = (limb)p;
            limb bi = (limb)(p >> 64) + (d[i] < lo);
            d[i] -= lo;
            borrow = bi;
        }
        if (!borrow) {
            u->n = n;
            big_trim(u);
            return qhat;
        }
        /* Went below zero: add qhat * v back, then try qhat - 1. */
        limb carry = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            u128 p = (i < m ? (u128)v->d[i] * qhat : 0) + carry;
            u128 t = (u128)d[i] + (limb)p;
            d[i] = (limb)t;
            carry = (limb)(p >> 64) + (limb)(t >> 64);
        }
        qhat--;
    }
}

static int big_from_bytes(Big *a, const unsigned char *p, Py_ssize_t len) {
    Py_ssize_t n = (len + 7) / 8;
    if (big_reserve(a, n) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) a->d[i] = 0;
    for (Py_ssize_t k = 0; k < len; k++) {
        Py_ssize_t bit = 8 * (len - 1 - k);
        a->d[bit / 64] |= (limb)p[k] << (bit % 64);
    }
    a->n = n;
    big_trim(a);
    return 0;
}

static PyObject *big_to_long(const Big *a) {
    if (a->n <= 1) return PyLong_FromUnsignedLongLong(a->n ? a->d[0] : 0);
    size_t len = (size_t)a->n * 8;  /* little-endian bytes, whatever the machine's order */
    unsigned char *b = PyMem_Malloc(len);
    if (b == NULL) return PyErr_NoMemory();
    for (size_t j = 0; j < len; j++) b[j] = (unsigned char)(a->d[j / 8] >> (8 * (j % 8)));
    PyObject *out = _PyLong_FromByteArray(b, len, 1, 0);
    PyMem_Free(b);
    return out;
}

static int u64_arg(PyObject *o, limb *out, const char *what) {
    if (!PyLong_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int", what);
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(o);
    if (*out == (limb)-1 && PyErr_Occurred()) return -1;
    return 0;
}

/* An interval low/den .. (low+rng)/den inside [0, 1), or ValueError. */
static int interval_args(PyObject *const *args, limb *low, limb *rng, limb *den) {
    if (u64_arg(args[0], low, "low") < 0 || u64_arg(args[1], rng, "rng") < 0 || u64_arg(args[2], den, "den") < 0)
        return -1;
    if (*rng == 0 || *low >= *den || *rng > *den - *low) {
        PyErr_SetString(PyExc_ValueError, "an interval needs 0 <= low < low + rng <= den");
        return -1;
    }
    return 0;
}

/* ---- Table: a categorical's entries, start-ordered, and the slot -> entry map ---- */

#define DIRECT_SLOTS (1 << 16)  /* totals up to this get a slot -> entry array, else a search */

typedef struct {
    PyObject_HEAD
    Py_ssize_t k;      /* entries */
    limb total;        /* slots in all */
    limb esc;          /* the escape's frequency (its slots are [0, esc)); 0: no escape */
    limb *start, *freq;
    uint32_t *slot;    /* slot - esc -> entry, or NULL: binary search over start */
    PyObject *values;  /* tuple, one value per entry */
    PyObject *escape;  /* what sym() gives for the escape */
} Table;

static void table_dealloc(Table *t) {
    PyMem_Free(t->start);
    PyMem_Free(t->freq);
    PyMem_Free(t->slot);
    Py_XDECREF(t->values);
    Py_XDECREF(t->escape);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* Table(freqs, values, total, esc, escape, direct=True): entries take consecutive slots from
 * esc on, in order, each ``freq`` of them; they must fill [esc, total) exactly. ``direct`` asks
 * for the slot -> entry array (4 bytes a slot, for totals up to DIRECT_SLOTS; the caller keeps
 * a model's budget of them), else slots are found by binary search. */
static PyObject *table_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *freqs, *values, *escape, *ototal, *oesc;
    int direct = 1;
    static char *names[] = {"freqs", "values", "total", "esc", "escape", "direct", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|p", names, &freqs, &values, &ototal, &oesc, &escape, &direct))
        return NULL;
    limb total, esc;
    if (u64_arg(ototal, &total, "total") < 0 || u64_arg(oesc, &esc, "esc") < 0) return NULL;
    PyObject *fs = PySequence_Tuple(freqs);
    if (fs == NULL) return NULL;
    PyObject *vs = PySequence_Tuple(values);
    if (vs == NULL) { Py_DECREF(fs); return NULL; }
    Py_ssize_t k = PyTuple_GET_SIZE(fs);
    Table *t = (Table *)type->tp_alloc(type, 0);
    if (t == NULL) goto fail;
    t->values = vs; vs = NULL;
    Py_INCREF(escape);
    t->escape = escape;
    t->k = k;
    t->total = total;
    t->esc = esc;
    if (k < 1 || k > UINT32_MAX || PyTuple_GET_SIZE(t->values) != k || total == 0 || esc >= total) {
        PyErr_SetString(PyExc_ValueError, "a table needs 1..2^32 entries, one value each, within its total");
        goto fail;
    }
    t->start = PyMem_Malloc((size_t)k * sizeof(limb));
    t->freq = PyMem_Malloc((size_t)k * sizeof(limb));
    if (t->start == NULL || t->freq == NULL) { PyErr_NoMemory(); goto fail; }
    limb at = esc;
    for (Py_ssize_t i = 0; i < k; i++) {
        limb f;
        if (u64_arg(PyTuple_GET_ITEM(fs, i), &f, "freq") < 0) goto fail;
        if (f == 0 || f > total - at) {
            PyErr_SetString(PyExc_ValueError, "table frequencies must be positive and fit the total");
            goto fail;
        }
        t->start[i] = at;
        t->freq[i] = f;
        at += f;
    }
    if (at != total) {
        PyErr_SetString(PyExc_ValueError, "table frequencies must fill the total");
        goto fail;
    }
    if (direct && total - esc <= DIRECT_SLOTS) {
        t->slot = PyMem_Malloc((size_t)(total - esc) * sizeof(uint32_t));
        if (t->slot == NULL) { PyErr_NoMemory(); goto fail; }
        for (Py_ssize_t i = 0; i < k; i++)
            for (limb s = t->start[i]; s < t->start[i] + t->freq[i]; s++) t->slot[s - esc] = (uint32_t)i;
    }
    Py_DECREF(fs);
    return (PyObject *)t;
fail:
    Py_DECREF(fs);
    Py_XDECREF(vs);
    Py_XDECREF(t);
    return NULL;
}

/* The entry holding slot s (esc <= s < total). */
static inline Py_ssize_t table_entry(const Table *t, limb s) {
    if (t->slot) return t->slot[s - t->esc];
    Py_ssize_t lo = 0, hi = t->k;  /* start[lo] <= s < start[hi] */
    while (hi - lo > 1) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (t->start[mid] <= s) lo = mid; else hi = mid;
    }
    return lo;
}

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zeroc.learned._native.Table",
    .tp_basicsize = sizeof(Table),
    .tp_dealloc = (destructor)table_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A categorical's slots, for the native coder.",
    .tp_new = table_new,
};

/* ---- Decoder ---- */

typedef struct {
    PyObject_HEAD
    Big x, R, den, num;
    Py_ssize_t size;
} Decoder;

static void dec_dealloc(Decoder *d) {
    big_free(&d->x); big_free(&d->R); big_free(&d->den); big_free(&d->num);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

/* The coder's step for a symbol [st, st + fr) of total T, its slot s already divided out:
 * x holds x*T - s*R; x += (s - st) * R, R *= fr, den *= T. */
static inline int dec_take(Decoder *d, limb s, limb st, limb fr, limb T) {
    if (big_addmul(&d->x, &d->R, s - st) < 0) return -1;
    if (big_mul(&d->R, fr) < 0) return -1;
    return big_mul(&d->den, T);
}

/* The slot of the next symbol of total T; x becomes x*T - slot*R. */
static inline int dec_slot(Decoder *d, limb T, limb *s) {
    if (big_mul(&d->x, T) < 0) return -1;
    if (big_reserve(&d->x, d->R.n + 1) < 0) return -1;
    *s = big_divmod(&d->x, &d->R);
    return 0;
}

static PyObject *dec_sym(Decoder *d, PyObject *arg) {
    if (Py_TYPE(arg) != &TableType) {
        PyErr_SetString(PyExc_TypeError, "sym() takes a Table");
        return NULL;
    }
    Table *t = (Table *)arg;
    limb s;
    if (dec_slot(d, t->total, &s) < 0) return NULL;
    if (s < t->esc) {
        if (dec_take(d, s, 0, t->esc, t->total) < 0) return NULL;
        Py_INCREF(t->escape);
        return t->escape;
    }
    Py_ssize_t i = table_entry(t, s);
    if (dec_take(d, s, t->start[i], t->freq[i], t->total) < 0) return NULL;
    PyObject *v = PyTuple_GET_ITEM(t->values, i);
    Py_INCREF(v);
    return v;
}

static PyObject *dec_uni(Decoder *d, PyObject *arg) {
    limb n, s;
    if (u64_arg(arg, &n, "n") < 0) return NULL;
    if (n == 0) { PyErr_SetString(PyExc_ValueError, "uni() needs n > 0"); return NULL; }
    if (dec_slot(d, n, &s) < 0 || big_mul(&d->den, n) < 0) return NULL;
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *dec_bits(Decoder *d, PyObject *arg) {
    long k = PyLong_AsLong(arg);
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (k < 0 || k > 63) { PyErr_SetString(PyExc_ValueError, "bits() takes 0..63"); return NULL; }
    limb s;
    if (dec_slot(d, (limb)1 << k, &s) < 0 || big_shl(&d->den, k) < 0) return NULL;
    return PyLong_FromUnsignedLongLong(s);
}

/* Whether the payload is the one the encoder writes for the symbols taken, in the cases the
 * generated code settles without zeroc.learned._coder.check (which it calls when this says no): the
 * payload's length is the first that may hold a number in the final interval, or one more
 * with no shorter number inside it, and it is the smallest of its length there (x < den). */
static PyObject *dec_end(Decoder *d, PyObject *unused) {
    Py_ssize_t diff = big_bits(&d->den) - big_bits(&d->R);
    Py_ssize_t n0 = (diff >= 0 ? diff / 8 : -((-diff + 7) / 8)) + d->size;
    int below = big_cmp(&d->x, &d->den) < 0;
    if (n0 == d->size) return PyBool_FromLong(below);
    if (n0 != d->size - 1 || !below) Py_RETURN_FALSE;
    /* The number one byte shorter, rounded up, must lie past the interval: x + c*den >= R. */
    limb c = (limb)(-(d->num.n ? d->num.d[0] : 0)) & 255;
    Big t;
    big_init(&t);
    if (big_copy(&t, &d->x) < 0 || big_addmul(&t, &d->den, c) < 0) { big_free(&t); return NULL; }
    int ok = big_cmp(&t, &d->R) >= 0;
    big_free(&t);
    return PyBool_FromLong(ok);
}

static PyObject *dec_get_x(Decoder *d, void *c) { return big_to_long(&d->x); }
static PyObject *dec_get_R(Decoder *d, void *c) { return big_to_long(&d->R); }
static PyObject *dec_get_den(Decoder *d, void *c) { return big_to_long(&d->den); }
static PyObject *dec_get_num(Decoder *d, void *c) { return big_to_long(&d->num); }

static PyMethodDef dec_methods[] = {
    {"sym", (PyCFunction)dec_sym, METH_O, "The next categorical symbol's value (or the table's escape)."},
    {"uni", (PyCFunction)dec_uni, METH_O, "The next uniform symbol in [0, n)."},
    {"bits", (PyCFunction)dec_bits, METH_O, "The next uniform symbol in [0, 2^k)."},
    {"end", (PyCFunction)dec_end, METH_NOARGS, "Whether the payload is canonical without the full check."},
    {NULL},
};

/* bitlen(den) - bitlen(R): how far the body has gone towards the end of a block (format 5),
 * read without building the integers. */
static PyObject *dec_get_spread(Decoder *d, void *c) {
    return PyLong_FromSsize_t(big_bits(&d->den) - big_bits(&d->R));
}

static PyGetSetDef dec_getset[] = {
    {"spread", (getter)dec_get_spread, NULL, NULL, NULL},
    {"x", (getter)dec_get_x, NULL, NULL, NULL},
    {"R", (getter)dec_get_R, NULL, NULL, NULL},
    {"den", (getter)dec_get_den, NULL, NULL, NULL},
    {"num", (getter)dec_get_num, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject DecoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zeroc.learned._native.Decoder",
    .tp_basicsize = sizeof(Decoder),
    .tp_dealloc = (destructor)dec_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A payload being decoded (made by decoder()).",
    .tp_methods = dec_methods,
    .tp_getset = dec_getset,
};

/* decoder(data, low, rng, den): the payload's place in the head interval low/den ..
 * (low+rng)/den, or None when it lies outside (a side stream, or off the common path). */
static PyObject *mod_decoder(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "decoder(data: bytes, low, rng, den)");
        return NULL;
    }
    limb low, rng, den;
    if (interval_args(args + 1, &low, &rng, &den) < 0) return NULL;
    Decoder *d = PyObject_New(Decoder, &DecoderType);
    if (d == NULL) return NULL;
    big_init(&d->x); big_init(&d->R); big_init(&d->den); big_init(&d->num);
    Py_ssize_t size = PyBytes_GET_SIZE(args[0]);
    d->size = size;
    Big t;
    big_init(&t);
    if (big_from_bytes(&d->num, (const unsigned char *)PyBytes_AS_STRING(args[0]), size) < 0) goto fail;
    /* x = num*den - low*scale, R = rng*scale, with scale = 256^size */
    if (big_copy(&d->x, &d->num) < 0 || big_mul(&d->x, den) < 0) goto fail;
    big_set_u64(&t, low);
    if (big_shl(&t, 8 * size) < 0) goto fail;
    big_set_u64(&d->R, rng);
    if (big_shl(&d->R, 8 * size) < 0) goto fail;
    big_set_u64(&d->den, den);
    if (big_cmp(&d->x, &t) < 0) goto off;
    big_submul(&d->x, &t, 1);
    if (big_cmp(&d->x, &d->R) >= 0) goto off;
    big_free(&t);
    return (PyObject *)d;
off:
    big_free(&t);
    Py_DECREF(d);
    Py_RETURN_NONE;
fail:
    big_free(&t);
    Py_DECREF(d);
    return NULL;
}

/* ---- Sym: one symbol [start, start + freq) of total, made once (a table hit, an escape) ---- */

typedef struct {
    PyObject_HEAD
    limb st, fr, T;
} Sym;

static PyObject *sym_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *a, *b, *c;
    static char *names[] = {"start", "freq", "total", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO", names, &a, &b, &c)) return NULL;
    limb st, fr, T;
    if (u64_arg(a, &st, "start") < 0 || u64_arg(b, &fr, "freq") < 0 || u64_arg(c, &T, "total") < 0) return NULL;
    if (fr == 0 || st >= T || fr > T - st) {
        PyErr_SetString(PyExc_ValueError, "a symbol needs 0 <= start < start + freq <= total");
        return NULL;
    }
    Sym *y = (Sym *)type->tp_alloc(type, 0);
    if (y == NULL) return NULL;
    y->st = st;
    y->fr = fr;
    y->T = T;
    return (PyObject *)y;
}

static PyTypeObject SymType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zeroc.learned._native.Sym",
    .tp_basicsize = sizeof(Sym),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A symbol made once, for Encoder.put.",
    .tp_new = sym_new,
};

/* ---- Encoder ---- */

typedef struct {
    PyObject_HEAD
    Big low, rng, den;
} Encoder;

static void enc_dealloc(Encoder *e) {
    big_free(&e->low); big_free(&e->rng); big_free(&e->den);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static inline int enc_put(Encoder *e, limb st, limb fr, limb T) {
    if (big_mul(&e->low, T) < 0 || big_addmul(&e->low, &e->rng, st) < 0) return -1;
    if (big_mul(&e->rng, fr) < 0) return -1;
    return big_mul(&e->den, T);
}

/* put(...): symbols in turn, each a Sym or three ints start, freq, total. */
static PyObject *enc_put_py(Encoder *e, PyObject *const *args, Py_ssize_t nargs) {
    for (Py_ssize_t i = 0; i < nargs; i += 3) {
        if (Py_TYPE(args[i]) == &SymType) {
            const Sym *y = (const Sym *)args[i];
            if (enc_put(e, y->st, y->fr, y->T) < 0) return NULL;
            i -= 2;
            continue;
        }
        limb st, fr, T;
        if (i + 3 > nargs) {
            PyErr_SetString(PyExc_TypeError, "put() takes Syms and (start, freq, total) triples");
            return NULL;
        }
        if (u64_arg(args[i], &st, "start") < 0 || u64_arg(args[i + 1], &fr, "freq") < 0 ||
            u64_arg(args[i + 2], &T, "total") < 0)
            return NULL;
        if (fr == 0 || st >= T || fr > T - st) {
            PyErr_SetString(PyExc_ValueError, "put() needs 0 <= start < start + freq <= total");
            return NULL;
        }
        if (enc_put(e, st, fr, T) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

/* The canonical payload (zeroc.learned._coder.shortest, no side bytes): k = ceil(low * 256^n / den)
 * for the first n from (bitlen(den) - bitlen(rng)) // 8 with k * den < (low + rng) * 256^n.
 * The digits of low / den in base 256 come from long division, up to eight bytes a step. */
static PyObject *enc_payload(Encoder *e, PyObject *unused) {
    Big r, w;
    big_init(&r);
    big_init(&w);
    PyObject *out = NULL;
    unsigned char *buf = NULL;
    const Big *den = &e->den;
    if (den->n == 0 || e->rng.n == 0 || big_cmp(&e->low, den) >= 0) {
        PyErr_SetString(PyExc_ValueError, "payload() needs 0 <= low < den and rng > 0");
        return NULL;
    }
    Py_ssize_t n = (big_bits(den) - big_bits(&e->rng)) / 8;
    Py_ssize_t cap = n + 16, have = 0;
    buf = PyMem_Malloc((size_t)cap);
    if (buf == NULL) { PyErr_NoMemory(); goto done; }
    if (big_copy(&r, &e->low) < 0 || big_copy(&w, &e->rng) < 0) goto done;
    for (;;) {
        while (have < n) {  /* the next digits: r <<= 8 m, digit = r // den, r %= den */
            Py_ssize_t m = n - have < 8 ? n - have : 8;
            if (big_shl(&r, 8 * m) < 0 || big_reserve(&r, den->n + 1) < 0) goto done;
            limb q = big_divmod(&r, den);
            if (have + m > cap) {
                cap = 2 * (have + m);
                unsigned char *b = PyMem_Realloc(buf, (size_t)cap);
                if (b == NULL) { PyErr_NoMemory(); goto done; }
                buf = b;
            }
            for (Py_ssize_t j = m - 1; j >= 0; j--) { buf[have + j] = (unsigned char)q; q >>= 8; }
            have += m;
            if (big_shl(&w, 8 * m) < 0) goto done;
        }
        /* k = q + (r > 0) is inside unless r > 0 and den - r >= w, i.e. den >= r + w. */
        if (r.n == 0) break;
        Big t;
        big_init(&t);
        if (big_copy(&t, &r) < 0 || big_addmul(&t, &w, 1) < 0) { big_free(&t); goto done; }
        int inside = big_cmp(den, &t) < 0;
        big_free(&t);
        if (inside) {
            Py_ssize_t j = n - 1;  /* round up; k < 256^n, so the carry stops inside */
            while (j >= 0 && buf[j] == 255) buf[j--] = 0;
            if (j < 0) { PyErr_SetString(PyExc_ValueError, "payload overflow"); goto done; }
            buf[j]++;
            break;
        }
        n++;
    }
    out = PyBytes_FromStringAndSize((const char *)buf, n);
done:
    PyMem_Free(buf);
    big_free(&r);
    big_free(&w);
    return out;
}

static PyObject *enc_get_low(Encoder *e, void *c) { return big_to_long(&e->low); }
static PyObject *enc_get_rng(Encoder *e, void *c) { return big_to_long(&e->rng); }
static PyObject *enc_get_den(Encoder *e, void *c) { return big_to_long(&e->den); }

static PyMethodDef enc_methods[] = {
    {"put", (PyCFunction)(void (*)(void))enc_put_py, METH_FASTCALL, "Code symbols: Syms and (start, freq, total) triples."},
    {"payload", (PyCFunction)enc_payload, METH_NOARGS, "The canonical payload of the interval."},
    {NULL},
};

static PyObject *enc_get_spread(Encoder *e, void *c) {
    return PyLong_FromSsize_t(big_bits(&e->den) - big_bits(&e->rng));
}

static PyGetSetDef enc_getset[] = {
    {"spread", (getter)enc_get_spread, NULL, NULL, NULL},
    {"low", (getter)enc_get_low, NULL, NULL, NULL},
    {"rng", (getter)enc_get_rng, NULL, NULL, NULL},
    {"den", (getter)enc_get_den, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject EncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zeroc.learned._native.Encoder",
    .tp_basicsize = sizeof(Encoder),
    .tp_dealloc = (destructor)enc_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An interval being narrowed (made by encoder()).",
    .tp_methods = enc_methods,
    .tp_getset = enc_getset,
};

/* encoder(low, rng, den): the head interval */
static PyObject *mod_encoder(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    limb low, rng, den;
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "encoder(low, rng, den)"); return NULL; }
    if (interval_args(args, &low, &rng, &den) < 0) return NULL;
    Encoder *e = PyObject_New(Encoder, &EncoderType);
    if (e == NULL) return NULL;
    big_init(&e->low); big_init(&e->rng); big_init(&e->den);
    big_set_u64(&e->low, low); big_set_u64(&e->rng, rng); big_set_u64(&e->den, den);
    return (PyObject *)e;
}

/* fields(value, keys): the values of a dict whose keys are ``keys`` in that order, as a tuple;
 * TypeError otherwise (the generated encoder's "off the common path"). The same test as
 * ``type(value) is dict and tuple(value) == keys``, then ``value.values()``. */
static PyObject *mod_fields(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fields(value, keys: tuple)");
        return NULL;
    }
    PyObject *value = args[0], *keys = args[1];
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (!PyDict_CheckExact(value) || PyDict_GET_SIZE(value) != n) goto off;
    PyObject *out = PyTuple_New(n), *got = PyTuple_New(n);
    if (out == NULL || got == NULL) { Py_XDECREF(out); Py_XDECREF(got); return NULL; }
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    while (i < n && PyDict_Next(value, &pos, &k, &v)) {  /* no Python code runs in this loop */
        Py_INCREF(k);
        Py_INCREF(v);
        PyTuple_SET_ITEM(got, i, k);
        PyTuple_SET_ITEM(out, i, v);
        i++;
    }
    for (i = 0; i < n; i++) {  /* then the keys, as tuple equality compares them */
        PyObject *a = PyTuple_GET_ITEM(got, i), *b = PyTuple_GET_ITEM(keys, i);
        if (a == b) continue;
        int same = PyObject_RichCompareBool(a, b, Py_EQ);
        if (same != 1) {
            Py_DECREF(got);
            Py_DECREF(out);
            if (same < 0) return NULL;
            goto off;
        }
    }
    Py_DECREF(got);
    return out;
off:
    PyErr_SetString(PyExc_TypeError, "not an object of the model's keys");
    return NULL;
}

static PyMethodDef mod_methods[] = {
    {"fields", (PyCFunction)(void (*)(void))mod_fields, METH_FASTCALL, "fields(value, keys)"},
    {"decoder", (PyCFunction)(void (*)(void))mod_decoder, METH_FASTCALL, "decoder(data, low, rng, den)"},
    {"encoder", (PyCFunction)(void (*)(void))mod_encoder, METH_FASTCALL, "encoder(low, rng, den)"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "zeroc.learned._native", "The learned codec's exact coder on fixed-width limbs.", -1, mod_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&TableType) < 0 || PyType_Ready(&SymType) < 0 || PyType_Ready(&DecoderType) < 0 ||
        PyType_Ready(&EncoderType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&TableType);
    if (PyModule_AddObject(m, "Table", (PyObject *)&TableType) < 0) { Py_DECREF(&TableType); Py_DECREF(m); return NULL; }
    Py_INCREF(&SymType);
    if (PyModule_AddObject(m, "Sym", (PyObject *)&SymType) < 0) { Py_DECREF(&SymType); Py_DECREF(m); return NULL; }
    return m;
}

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
#include <structmember.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

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

/* An entry: its first slot and its value (borrowed from the table's tuple); its frequency is the
 * next entry's start less its own, so a symbol's bounds and value share a cache line or two. A
 * short ASCII str value's characters are also held here (tlen of them; 0: none), so that a value
 * decoded into a longer text (a template's, a shape's) reads no str object of the model's. A
 * value decoded as it is is the model's own str: a new reference costs less than a copy, most of
 * all in a large message, whose copies are made, and freed, out of the caches. */
#define ENT_TEXT 15
typedef struct {
    limb start;
    PyObject *value;
    uint8_t tlen;
    char text[ENT_TEXT];
} TEntry;
_Static_assert(sizeof(TEntry) == 32, "two entries a cache line");

static inline limb ent_freq(const TEntry *e) { return e[1].start - e[0].start; }

typedef struct {
    PyObject_HEAD
    Py_ssize_t k;      /* entries */
    limb total;        /* slots in all */
    limb esc;          /* the escape's frequency (its slots are [0, esc)); 0: no escape */
    TEntry *ent;       /* k + 1 of them: the last holds start = total and no value */
    uint16_t *slot16;  /* slot - esc -> entry, where fewer than 2^16 entries: half the bytes */
    uint32_t *slot;    /* the same where 2^16 entries or more; both NULL: binary search over start, from */
    uint32_t *bucket;  /* the entry at slot esc + (j << shift), one per bucket j (nb of them) */
    size_t nb;
    int shift;
    PyObject *values;  /* tuple, one value per entry */
    PyObject *escape;  /* what sym() gives for the escape */
} Table;

static void table_dealloc(Table *t) {
    PyMem_Free(t->ent);
    PyMem_Free(t->slot16);
    PyMem_Free(t->slot);
    PyMem_Free(t->bucket);
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
    t->ent = PyMem_Malloc((size_t)(k + 1) * sizeof(TEntry));
    if (t->ent == NULL) { PyErr_NoMemory(); goto fail; }
    limb at = esc;
    for (Py_ssize_t i = 0; i < k; i++) {
        limb f;
        if (u64_arg(PyTuple_GET_ITEM(fs, i), &f, "freq") < 0) goto fail;
        if (f == 0 || f > total - at) {
            PyErr_SetString(PyExc_ValueError, "table frequencies must be positive and fit the total");
            goto fail;
        }
        PyObject *v = PyTuple_GET_ITEM(t->values, i);
        t->ent[i].start = at;
        t->ent[i].value = v;
        t->ent[i].tlen = 0;
        if (PyUnicode_CheckExact(v) && PyUnicode_IS_ASCII(v) && PyUnicode_GET_LENGTH(v) >= 1 &&
            PyUnicode_GET_LENGTH(v) <= ENT_TEXT) {
            t->ent[i].tlen = (uint8_t)PyUnicode_GET_LENGTH(v);
            memcpy(t->ent[i].text, PyUnicode_1BYTE_DATA(v), t->ent[i].tlen);
        }
        at += f;
    }
    if (at != total) {
        PyErr_SetString(PyExc_ValueError, "table frequencies must fill the total");
        goto fail;
    }
    t->ent[k].start = total;
    t->ent[k].value = NULL;
    t->ent[k].tlen = 0;
    if (direct && total - esc <= DIRECT_SLOTS && k <= UINT16_MAX) {
        t->slot16 = PyMem_Malloc((size_t)(total - esc) * sizeof(uint16_t));
        if (t->slot16 == NULL) { PyErr_NoMemory(); goto fail; }
        for (Py_ssize_t i = 0; i < k; i++)
            for (limb s = t->ent[i].start; s < t->ent[i + 1].start; s++) t->slot16[s - esc] = (uint16_t)i;
    } else if (direct && total - esc <= DIRECT_SLOTS) {
        t->slot = PyMem_Malloc((size_t)(total - esc) * sizeof(uint32_t));
        if (t->slot == NULL) { PyErr_NoMemory(); goto fail; }
        for (Py_ssize_t i = 0; i < k; i++)
            for (limb s = t->ent[i].start; s < t->ent[i + 1].start; s++) t->slot[s - esc] = (uint32_t)i;
    } else {
        /* About one bucket per entry: a search then starts within an entry or two of its
         * answer (a 4,096-word vocabulary's bisection missed the cache at every step). */
        size_t nb = 1;
        while (nb < (size_t)k && nb < ((size_t)1 << 20)) nb <<= 1;
        int shift = 0;
        while (shift < 63 && ((total - esc - 1) >> shift) >= nb) shift++;
        t->bucket = PyMem_Malloc(nb * sizeof(uint32_t));
        if (t->bucket == NULL) { PyErr_NoMemory(); goto fail; }
        limb last = (total - esc - 1) >> shift;  /* the last bucket a slot falls in */
        Py_ssize_t e = 0;
        for (size_t j = 0; j < nb; j++) {
            if (j > last) {
                e = k - 1;
            } else {
                limb r = esc + ((limb)j << shift);
                while (e + 1 < k && t->ent[e + 1].start <= r) e++;
            }
            t->bucket[j] = (uint32_t)e;
        }
        t->nb = nb;
        t->shift = shift;
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
    if (t->slot16) return t->slot16[s - t->esc];
    if (t->slot) return t->slot[s - t->esc];
    size_t j = (size_t)((s - t->esc) >> t->shift);
    Py_ssize_t lo = t->bucket[j], hi = j + 1 < t->nb ? (Py_ssize_t)t->bucket[j + 1] + 1 : t->k;
    /* start[lo] <= s < start[hi] */
    while (hi - lo > 1) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (t->ent[mid].start <= s) lo = mid; else hi = mid;
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
    if (dec_take(d, s, t->ent[i].start, ent_freq(&t->ent[i]), t->total) < 0) return NULL;
    PyObject *v = t->ent[i].value;
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

/* ---- The general rules (spec/LEARNED_MODEL.md §3) as a program of nodes, format 5 ----
 *
 * A model's nodes, flattened by zeroc/learned/_walk.py into a Program: one WNode per node with
 * its tables as C arrays and Python dicts. WEnc and WDec are format 5's block coder
 * (zeroc.learned._coder.Encoder/Decoder with blocks) on limbs; they also offer the Python
 * coder's methods (put, put_bytes; peek, take, uniform, take_bytes), so a node the program does
 * not code itself — rules, or a value outside what C handles (integers past 64 bits) — is
 * handed to its Python node, which codes it on the same coder. The symbols, and so the bytes,
 * are the Python walk's; tests hold the two to it. Rare steps (a block ending, the final
 * canonical check) call back into _coder.py. */

static PyObject *H_fastloads, *H_dumps, *H_loads, *H_as_key, *H_copy, *H_number, *H_block, *H_side, *H_DecodeError, *H_Off, *H_Limit;
static PyObject *S_encode, *S_decode, *S_encode_in, *S_decode_in, *S_encode_common, *S_decode_common,
    *S_encode_common_in, *S_decode_common_in, *S_compress, *S_compress_in, *S_dict, *S_list, *S_float;
static PyObject *K_empty_dict, *K_empty_list;  /* as_key({}) and as_key([]) */

#define BLOCK_BITS 2048
#define BLOCK_BYTES 288
#define MAX_SYMBOLS 4096
#define PER_BYTE 16
#define FLAG_TOTAL 65536
#define MAX_LENGTH 1000000
#define MAX_WORDS 10000
#define RANGE_BOTTOM ((limb)1 << 56)
#define RANGE_DIRECT ((limb)1 << 40)
#define SIDE_MODES 3

/* A categorical's string entries as a C hash table over code points: a lookup by a span of a
 * larger string needs no substring object, and a hit reads one 32-byte slot that holds the
 * entry's symbol and, for keys of up to 15 Latin-1 characters, the key itself, instead of the
 * dict's entry, its key object and the table's arrays (on a faker record's vocabularies of
 * thousands of words each of those was a cache miss). The hash is seeded from Python's own
 * (randomised) string hash. */
#define SLOT_INLINE 15
#define SLOT_BY_OBJECT 0xFF   /* len: the key is the object in key (a longer or wider str) */
typedef struct {
    uint32_t tag;             /* the hash's high half */
    uint32_t entry1;          /* entry + 1; 0: an empty slot */
    uint32_t start, freq;     /* the entry's symbol in its table (0, 0 without a table) */
    uint8_t len;              /* the key's length in characters, or SLOT_BY_OBJECT */
    uint8_t key[SLOT_INLINE]; /* its Latin-1 characters, or a borrowed PyObject * (memcpy) */
} StrSlot;

typedef struct {
    size_t mask;
    StrSlot *slots;
} StrIndex;

static uint64_t str_seed;

static inline uint64_t span_hash(int kind, const void *data, Py_ssize_t a, Py_ssize_t b) {
    uint64_t h = str_seed ^ ((uint64_t)(b - a) * 0xff51afd7ed558ccdULL);
#define SPAN_MIX(T) for (Py_ssize_t q = a; q < b; q++) { h = (h ^ ((const T *)data)[q]) * 0x9e3779b97f4a7c15ULL; h ^= h >> 31; }
    if (kind == PyUnicode_1BYTE_KIND) { SPAN_MIX(Py_UCS1) }
    else if (kind == PyUnicode_2BYTE_KIND) { SPAN_MIX(Py_UCS2) }
    else { SPAN_MIX(Py_UCS4) }
#undef SPAN_MIX
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 32);
}

static inline int span_equal(PyObject *key, int kind, const void *data, Py_ssize_t a, Py_ssize_t b) {
    Py_ssize_t n = b - a;
    if (PyUnicode_GET_LENGTH(key) != n) return 0;
    int kk = PyUnicode_KIND(key);
    const void *kd = PyUnicode_DATA(key);
    if (kk == kind) return memcmp(kd, (const char *)data + a * kind, (size_t)(n * kind)) == 0;
    for (Py_ssize_t q = 0; q < n; q++)
        if (PyUnicode_READ(kk, kd, q) != PyUnicode_READ(kind, data, a + q)) return 0;
    return 1;
}

static inline int slot_equal(const StrSlot *slot, int kind, const void *data, Py_ssize_t a, Py_ssize_t b) {
    if (slot->len == SLOT_BY_OBJECT) {
        PyObject *key;
        memcpy(&key, slot->key, sizeof key);
        return span_equal(key, kind, data, a, b);
    }
    if (b - a != slot->len) return 0;
    if (kind == PyUnicode_1BYTE_KIND) return memcmp(slot->key, (const Py_UCS1 *)data + a, (size_t)slot->len) == 0;
    for (Py_ssize_t q = 0; q < slot->len; q++)
        if (PyUnicode_READ(kind, data, a + q) != slot->key[q]) return 0;
    return 1;
}

static void str_index_free(StrIndex *x) {
    if (x == NULL) return;
    PyMem_Free(x->slots);
    PyMem_Free(x);
}

/* The table of a by_str dict (with each entry's symbol from table, which may be NULL), or NULL
 * with no error where the dict serves (an empty dict, a key that is not an exact str, an entry
 * past the table or 2^31, a total past 2^32), or NULL with an error. */
static StrIndex *str_index_new(PyObject *by_str, const Table *table) {
    Py_ssize_t n = PyDict_GET_SIZE(by_str), pos = 0;
    if (n == 0 || (table != NULL && table->total > UINT32_MAX)) return NULL;
    size_t cap = 8;
    while (cap < (size_t)n * 2) cap <<= 1;
    StrIndex *x = PyMem_Malloc(sizeof(StrIndex));
    StrSlot *slots = PyMem_Calloc(cap, sizeof(StrSlot));
    if (x == NULL || slots == NULL) { PyMem_Free(x); PyMem_Free(slots); PyErr_NoMemory(); return NULL; }
    x->mask = cap - 1;
    x->slots = slots;
    PyObject *k, *v;
    while (PyDict_Next(by_str, &pos, &k, &v)) {
        if (!PyUnicode_CheckExact(k) || !PyLong_CheckExact(v)) { str_index_free(x); return NULL; }
        Py_ssize_t entry = PyLong_AsSsize_t(v);
        if (entry < 0 || entry >= INT32_MAX || (table != NULL && entry >= table->k)) {
            PyErr_Clear();
            str_index_free(x);
            return NULL;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(k);
        uint64_t h = span_hash(PyUnicode_KIND(k), PyUnicode_DATA(k), 0, len);
        size_t at = (size_t)h & x->mask;
        while (slots[at].entry1 != 0) at = (at + 1) & x->mask;  /* keys are distinct: no match */
        StrSlot *slot = &slots[at];
        slot->tag = (uint32_t)(h >> 32);
        slot->entry1 = (uint32_t)entry + 1;
        if (table != NULL) {
            slot->start = (uint32_t)table->ent[entry].start;
            slot->freq = (uint32_t)ent_freq(&table->ent[entry]);
        }
        if (PyUnicode_KIND(k) == PyUnicode_1BYTE_KIND && len <= SLOT_INLINE) {
            slot->len = (uint8_t)len;
            memcpy(slot->key, PyUnicode_DATA(k), (size_t)len);
        } else {
            slot->len = SLOT_BY_OBJECT;
            memcpy(slot->key, &k, sizeof k);
        }
    }
    return x;
}

/* The slot of the text v[a:b], or NULL. */
static inline const StrSlot *str_index_find(const StrIndex *x, PyObject *v, Py_ssize_t a, Py_ssize_t b) {
    int kind = PyUnicode_KIND(v);
    const void *data = PyUnicode_DATA(v);
    uint64_t h = span_hash(kind, data, a, b);
    uint32_t tag = (uint32_t)(h >> 32);
    for (size_t at = (size_t)h & x->mask;; at = (at + 1) & x->mask) {
        const StrSlot *slot = &x->slots[at];
        if (slot->entry1 == 0) return NULL;
        if (slot->tag == tag && slot_equal(slot, kind, data, a, b)) return slot;
    }
}

/* A categorical's int entries as a C hash table (each a 24-byte slot with the entry's symbol),
 * for the same reasons as StrIndex: a Python dict lookup of an int read the dict's arrays and
 * the key object. Keys of 64 bits (a table with a larger one keeps its dict); the hash is the
 * splitmix64 finalizer of the key xor str_seed, so that a model file cannot choose collisions. */
typedef struct {
    int64_t key;
    uint32_t entry1;          /* entry + 1; 0: an empty slot */
    uint32_t start, freq;     /* the entry's symbol in its table (0, 0 without a table) */
} IntSlot;

typedef struct {
    size_t mask;
    IntSlot *slots;
} IntIndex;

static inline uint64_t int_hash(int64_t k) {
    uint64_t h = (uint64_t)k ^ str_seed;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

static void int_index_free(IntIndex *x) {
    if (x == NULL) return;
    PyMem_Free(x->slots);
    PyMem_Free(x);
}

/* The table of a by_int dict (entries' symbols from table, which may be NULL), or NULL with no
 * error where the dict serves (an empty dict, a key that is not an exact int of 64 bits, an
 * entry past the table or 2^31, a total past 2^32), or NULL with an error. */
static IntIndex *int_index_new(PyObject *by_int, const Table *table) {
    Py_ssize_t n = PyDict_GET_SIZE(by_int), pos = 0;
    if (n == 0 || (table != NULL && table->total > UINT32_MAX)) return NULL;
    size_t cap = 8;
    while (cap < (size_t)n * 2) cap <<= 1;
    IntIndex *x = PyMem_Malloc(sizeof(IntIndex));
    IntSlot *slots = PyMem_Calloc(cap, sizeof(IntSlot));
    if (x == NULL || slots == NULL) { PyMem_Free(x); PyMem_Free(slots); PyErr_NoMemory(); return NULL; }
    x->mask = cap - 1;
    x->slots = slots;
    PyObject *k, *v;
    while (PyDict_Next(by_int, &pos, &k, &v)) {
        int overflow = 0;
        long long key = PyLong_CheckExact(k) ? PyLong_AsLongLongAndOverflow(k, &overflow) : 0;
        Py_ssize_t entry = PyLong_CheckExact(v) ? PyLong_AsSsize_t(v) : -1;
        if (!PyLong_CheckExact(k) || overflow || PyErr_Occurred() || entry < 0 || entry >= INT32_MAX ||
            (table != NULL && entry >= table->k)) {
            PyErr_Clear();
            int_index_free(x);
            return NULL;
        }
        size_t at = (size_t)int_hash(key) & x->mask;
        while (slots[at].entry1 != 0) at = (at + 1) & x->mask;  /* keys are distinct: no match */
        IntSlot *slot = &slots[at];
        slot->key = key;
        slot->entry1 = (uint32_t)entry + 1;
        if (table != NULL) {
            slot->start = (uint32_t)table->ent[entry].start;
            slot->freq = (uint32_t)ent_freq(&table->ent[entry]);
        }
    }
    return x;
}

/* The slot of the int v, or NULL (also for an int past 64 bits, which no key is). */
static inline const IntSlot *int_index_find(const IntIndex *x, PyObject *v) {
    int overflow;
    long long key = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) return NULL;
    for (size_t at = (size_t)int_hash(key) & x->mask;; at = (at + 1) & x->mask) {
        const IntSlot *slot = &x->slots[at];
        if (slot->entry1 == 0) return NULL;
        if (slot->key == key) return slot;
    }
}

enum { K_PY, K_RAW, K_CAT, K_RANGE, K_MAG, K_DEC, K_TEMPLATE, K_SHAPE, K_WORDS, K_OBJECT, K_ARRAY, K_MAP, K_GIVEN, K_PREFIXED, K_CHARS, K_AFFIX, K_SUM };

/* The rules C codes inside an object (the others are Python nodes). */
#define C_RULE(kind) ((kind) == K_GIVEN || (kind) == K_PREFIXED || (kind) == K_AFFIX || (kind) == K_SUM)

/* A chars node's table (spec §2, Characters): which symbols 0..256 it lists (a bitmap, so a
 * symbol's row is the count of listed symbols below it), the rows' slots at off.. in the node's
 * arrays, and the escape. One cache line; n == 0 for a context without a table. */
#define CHAR_END 256
#define CHAR_BYTES 257
#define CHAR_BASE 257  /* the base table's index, after the 257 contexts */
typedef struct {
    uint64_t bits[5];
    limb esc, total;
    int32_t off;
    int16_t n;
    uint8_t below64;          /* symbols listed below 64: an ASCII symbol's row is one popcount */
} CharTab;
_Static_assert(sizeof(CharTab) == 64, "a chars table is one cache line");

/* A table's rows, in symbol order, each one word: the row's first slot above the symbol
 * (start << CHAR_SHIFT | symbol; starts are below 2^41), then one more word holding the total,
 * so a row's frequency is the next word's start: a symbol's start, frequency and byte are read
 * from one or two adjacent words, mostly one cache line (three arrays took three). */
#define CHAR_SHIFT 16
#define CHAR_GUIDE 16  /* guide buckets a table: a slot's row is a step or two from its bucket's */

/* What decoding a byte reads of its table, in one cache line: the bounds, where its rows start,
 * and its guide (the row at each bucket's first slot), so that a byte costs this line and its
 * row's. */
typedef struct {
    _Alignas(64) limb esc;
    limb total;
    uint64_t magic;           /* a range / total as a multiplication (div_by) */
    int32_t off;
    int16_t n;
    uint8_t gshift;           /* slot >> gshift: the table's guide bucket (of CHAR_GUIDE) */
    uint8_t dshift;
    uint16_t guide[CHAR_GUIDE];
} CharDec;
_Static_assert(sizeof(CharDec) == 64, "a chars table's decoding side is one cache line");

/* Division by a divisor d >= 2 known in advance, as a multiplication (Granlund and Montgomery,
 * "Division by invariant integers using multiplication", 1994, figure 4.1: exact for every
 * 64-bit n): div_magic gives its multiplier and shift, div_by the quotient. */
static void div_magic(limb d, uint64_t *magic, uint8_t *shift) {
    int l = 64 - __builtin_clzll(d - 1);  /* ceil(log2 d), d >= 2 */
    *magic = (uint64_t)((((u128)(((u128)1 << l) - d)) << 64) / d) + 1;
    *shift = (uint8_t)(l - 1);
}

static inline limb div_by(limb n, uint64_t magic, uint8_t shift) {
    limb t = (limb)(((u128)n * magic) >> 64);
    return (t + ((n - t) >> 1)) >> shift;
}

typedef struct {
    CharTab tab[CHAR_BASE + 1];
    CharDec dec[CHAR_BASE + 1];
    uint64_t *rows;           /* table by table: its rows, ending in its total */
    void *mem;                /* what holds this struct, aligned to a cache line */
} Chars;

static inline limb row_start(uint64_t w) { return (limb)(w >> CHAR_SHIFT); }
static inline int row_sym(uint64_t w) { return (int)(w & 0xffff); }
static inline limb row_freq(const uint64_t *w) { return row_start(w[1]) - row_start(w[0]); }

static inline int char_has(const CharTab *t, int x) { return (int)((t->bits[x >> 6] >> (x & 63)) & 1); }

/* Set bits of a word: the popcnt instruction where the build targets it or (x86-64, whose
 * baseline lacks it) where the CPU has it, else a few shifts and a multiply (the library call
 * GCC falls back to cost a faker record's encode 7% of its instructions). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__)
static int has_popcnt;  /* set at import */
#endif

static inline int32_t pop64(uint64_t x) {
#if defined(__POPCNT__) || defined(__aarch64__)
    return (int32_t)__builtin_popcountll(x);
#else
#if defined(__x86_64__) && defined(__GNUC__)
    if (has_popcnt) {  /* one branch, always the same way */
        uint64_t r;
        __asm__("popcnt %1, %0" : "=r"(r) : "r"(x) : "cc");
        return (int32_t)r;
    }
#endif
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (int32_t)((x * 0x0101010101010101ULL) >> 56);
#endif
}

static inline int32_t char_row(const CharTab *t, int x) {
    if (x < 128) {  /* ASCII: one popcount */
        uint64_t below = ((uint64_t)1 << (x & 63)) - 1;
        return t->off + (x < 64 ? pop64(t->bits[0] & below) : t->below64 + pop64(t->bits[1] & below));
    }
    int32_t r = 0;
    for (int j = 0; j < (x >> 6); j++) r += pop64(t->bits[j]);
    if (x & 63) r += pop64(t->bits[x >> 6] & (((uint64_t)1 << (x & 63)) - 1));
    return t->off + r;
}

static void chars_free(Chars *c) {
    if (c == NULL) return;
    PyMem_Free(c->rows);
    PyMem_Free(c->mem);
}

/* One table from (esc, symbols, counts) into slot `at` of c, its rows from *rows on; -1 when
 * malformed (ValueError set) or on an error. */
static int chars_table(Chars *c, int at, PyObject *t, int32_t *rows, int32_t cap) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) goto bad;
    PyObject *syms = PyTuple_GET_ITEM(t, 1), *counts = PyTuple_GET_ITEM(t, 2);
    if (!PyTuple_Check(syms) || !PyTuple_Check(counts) || PyTuple_GET_SIZE(syms) != PyTuple_GET_SIZE(counts)) goto bad;
    Py_ssize_t n = PyTuple_GET_SIZE(syms);
    CharTab *tab = &c->tab[at];
    if (n < 1 || n > CHAR_BYTES || tab->n != 0 || *rows + n + 1 > cap) goto bad;
    unsigned long long esc = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 0));
    if (PyErr_Occurred()) return -1;
    if (esc < 1 || esc > RANGE_DIRECT) goto bad;
    tab->esc = esc;
    tab->off = *rows;
    tab->n = (int16_t)n;
    limb pos = esc;
    int last = -1;
    for (Py_ssize_t j = 0; j < n; j++) {
        long x = PyLong_AsLong(PyTuple_GET_ITEM(syms, j));
        unsigned long long f = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(counts, j));
        if (PyErr_Occurred()) return -1;
        if (x <= last || x > CHAR_END || f < 1 || f > RANGE_DIRECT) goto bad;
        last = (int)x;
        tab->bits[x >> 6] |= (uint64_t)1 << (x & 63);
        c->rows[(*rows)++] = (uint64_t)pos << CHAR_SHIFT | (uint64_t)x;
        pos += f;
        if (pos > RANGE_DIRECT) goto bad;
    }
    c->rows[(*rows)++] = (uint64_t)pos << CHAR_SHIFT;  /* the end of the last row */
    tab->total = pos;
    CharDec *dec = &c->dec[at];
    dec->esc = tab->esc;
    dec->total = pos;
    dec->off = tab->off;
    dec->n = tab->n;
    div_magic(pos, &dec->magic, &dec->dshift);  /* pos > esc >= 1 */
    int g = 0;
    while (((pos - 1) >> g) >= CHAR_GUIDE) g++;
    dec->gshift = (uint8_t)g;
    const uint64_t *first = c->rows + tab->off;
    uint16_t *guide = dec->guide;
    int32_t r = 0;
    for (int j = 0; j < CHAR_GUIDE; j++) {  /* the last row starting at or below the bucket's first slot */
        limb slot = (limb)j << g < esc ? esc : (limb)j << g;
        while (r + 1 < n && row_start(first[r + 1]) <= slot) r++;
        guide[j] = (uint16_t)r;
    }
    tab->below64 = (uint8_t)pop64(tab->bits[0]);
    return 0;
bad:
    PyErr_SetString(PyExc_ValueError, "a malformed chars table");
    return -1;
}

/* A chars node's tables from (((context, esc, symbols, counts), ...), (esc, symbols, counts)). */
static Chars *chars_new(PyObject *extra) {
    if (!PyTuple_Check(extra) || PyTuple_GET_SIZE(extra) != 2 || !PyTuple_Check(PyTuple_GET_ITEM(extra, 0))) {
        PyErr_SetString(PyExc_ValueError, "a malformed chars node");
        return NULL;
    }
    PyObject *tables = PyTuple_GET_ITEM(extra, 0), *base = PyTuple_GET_ITEM(extra, 1);
    Py_ssize_t nt = PyTuple_GET_SIZE(tables);
    if (nt > CHAR_BYTES) { PyErr_SetString(PyExc_ValueError, "a malformed chars node"); return NULL; }
    int32_t cap = (int32_t)((nt + 1) * (CHAR_BYTES + 1)), rows = 0;
    void *mem = PyMem_Calloc(1, sizeof(Chars) + 63);
    if (mem == NULL) { PyErr_NoMemory(); return NULL; }
    Chars *c = (Chars *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
    c->mem = mem;
    c->rows = PyMem_Calloc((size_t)cap, sizeof(uint64_t));
    if (c->rows == NULL) { chars_free(c); PyErr_NoMemory(); return NULL; }
    for (Py_ssize_t j = 0; j < nt; j++) {
        PyObject *t = PyTuple_GET_ITEM(tables, j);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4) { PyErr_SetString(PyExc_ValueError, "a malformed chars table"); chars_free(c); return NULL; }
        long ctx = PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
        if (ctx == -1 && PyErr_Occurred()) { chars_free(c); return NULL; }
        if (ctx < 0 || ctx > CHAR_END) { PyErr_SetString(PyExc_ValueError, "a malformed chars table"); chars_free(c); return NULL; }
        PyObject *rest = PyTuple_GetSlice(t, 1, 4);
        int rc = rest ? chars_table(c, (int)ctx, rest, &rows, cap) : -1;
        Py_XDECREF(rest);
        if (rc < 0) { chars_free(c); return NULL; }
    }
    if (chars_table(c, CHAR_BASE, base, &rows, cap) < 0) { chars_free(c); return NULL; }
    return c;
}


/* A node of a Program. Its first cache line holds what decoding a categorical reads (its
 * table's bounds, entries and slots, copied from the Table), so that a symbol costs that line,
 * its slot and its entry rather than also the Table object's and the node's later lines. */
typedef struct {
    _Alignas(64) int kind;    /* (nodes are whole cache lines, the array aligned to one) */
    uint8_t leaves;           /* categorical: an unseen value leaves the common path */
    uint8_t mutable_;
    uint8_t chained;          /* object (format 8): other is the next key order's object, and
                                 the common path runs through it (hit or escape coded there too) */
    uint8_t guided;           /* categorical: slot16 is a guide (see cat_guide), not a slot array */
    limb esc, total;          /* the escape (0, esc, total) and the hit (esc, total - esc, total) */
    Py_ssize_t other;         /* where an escape goes: a node, or -1 for JSON text */
    const TEntry *ent;        /* categorical: the table's entries, */
    const uint16_t *slot16;   /* its slot -> entry array, or guide, or NULL (then table_entry), */
    Py_ssize_t k;             /* and how many entries */
    PyObject *py;             /* the Python node */
    Py_ssize_t a, b, c;       /* magnitude: buckets; decimal, template: inner; words: count;
                                 array: lengths, item; map: count, key, value */
    Py_ssize_t nkids, *kids;  /* object, shape: children; words: the vocabularies */
    char *rule;               /* object: which children are rules */
    PyObject *by_str, *by_int, *by_key;  /* categorical: value -> entry (as_key's classes) */
    StrIndex *sidx;           /* categorical: by_str as a C table (NULL: use the dict) */
    IntIndex *iidx;           /* categorical: by_int as a C table (NULL: use the dict) */
    Table *table;
    long long lo;             /* int_range */
    limb span;
    int scale;                /* decimal */
    double pow10;
    PyObject *pow10_obj;
    PyObject *prefix;         /* template; affix (and its suffix); sum: the items' two keys */
    PyObject *suffix;
    int quoted, numeric;      /* affix: the source URL-quoted; an int's decimal text */
    Py_ssize_t width;
    PyObject *literals;       /* shape: tuple of str */
    char kinds[40];
    int tokens;               /* words */
    PyObject *keys;           /* object: tuple of str */
    Py_ssize_t source;        /* given, prefixed: the earlier field read */
    PyObject *preds;          /* given: predicted values; prefixed: prefixes (by entry) */
    char *plain;              /* given: which predictions == tells apart (the common path's test) */
    Chars *chars;             /* chars: the tables */
    uint16_t *guide;          /* categorical: the guide slot16 points to, where guided (owned) */
    Py_ssize_t konst[3];      /* categorical, rules: the entries of True, False and None, or -1 */
} WNode;
_Static_assert(offsetof(WNode, k) + sizeof(Py_ssize_t) <= 64, "a categorical's fields in the node's first line");

typedef struct {
    PyObject_HEAD
    Py_ssize_t n;
    WNode *nodes;             /* in nodes_mem, aligned to a cache line */
    void *nodes_mem;
    /* set by setup() for frame() and unframe(): the flag's two symbols (range coder), the side
     * stream's engine, whether to walk both paths at once */
    limb on[3], off[3];
    PyObject *engine;
    int both, ready;
    /* frame()'s coders and output buffer, reused by the next frame unless one is under way
     * (busy: another thread's, while this one's side stream is compressed in Python) */
    PyObject *spare[2];
    unsigned char *obuf;
    Py_ssize_t ocap;
    int busy;
    PyObject *dspare;         /* unframe()'s decoder, likewise (dbusy) */
    int dbusy;
    /* frame()'s payloads: how many, their bits, how many left the common path (Model.drift) */
    long long seen, bits, misses;
} Program;

static PyObject *derr(const char *msg) {
    PyErr_SetString(H_DecodeError ? H_DecodeError : PyExc_ValueError, msg);
    return NULL;
}

/* Whether a block's symbols carry more than 2^BLOCK_BITS of information: den > rng << 2048. */
static int block_over(const Big *den, const Big *rng, int *over) {
    Py_ssize_t bd = big_bits(den), br = big_bits(rng);
    if (bd <= br + BLOCK_BITS - 1) { *over = 0; return 0; }
    if (bd >= br + BLOCK_BITS + 2) { *over = 1; return 0; }
    Big t;
    big_init(&t);
    if (big_copy(&t, rng) < 0 || big_shl(&t, BLOCK_BITS) < 0) { big_free(&t); return -1; }
    *over = big_cmp(den, &t) > 0;
    big_free(&t);
    return 0;
}

/* The last few dicts or lists rules read their predictions by, and their as_key: the rules of one
 * object that share a source serialize it once (an object's rules may take turns between two or
 * three sources). Forgotten when a value's walk ends (an encoder's source is the caller's and may
 * change before the next). */
#define KEY_CACHE 4
typedef struct {
    PyObject *src[KEY_CACHE], *key[KEY_CACHE];
    int next;  /* the slot the next new source takes */
} KeyCache;

static inline void keys_forget(KeyCache *kc) {
    for (int j = 0; j < KEY_CACHE; j++) {
        Py_CLEAR(kc->src[j]);
        Py_CLEAR(kc->key[j]);
    }
    kc->next = 0;
}

/* as_key(v) kept in kc (a new reference), or NULL with no error where kc lacks v. */
static inline PyObject *keys_get(const KeyCache *kc, PyObject *v) {
    for (int j = 0; j < KEY_CACHE; j++)
        if (kc->src[j] == v) return Py_NewRef(kc->key[j]);
    return NULL;
}

static inline void keys_put(KeyCache *kc, PyObject *v, PyObject *k) {
    Py_XSETREF(kc->src[kc->next], Py_NewRef(v));
    Py_XSETREF(kc->key[kc->next], Py_NewRef(k));
    kc->next = (kc->next + 1) % KEY_CACHE;
}

/* ---- WEnc ---- */

/* The range coder over out (grown as needed): one symbol. */
typedef struct { unsigned char *b; Py_ssize_t n, cap; limb low, rng; } RangeOut;

static int rout_grow(RangeOut *o, Py_ssize_t need) {
    Py_ssize_t cap = 2 * o->cap + need + 64;
    unsigned char *b = PyMem_Realloc(o->b, (size_t)cap);
    if (b == NULL) { PyErr_NoMemory(); return -1; }
    o->b = b;
    o->cap = cap;
    return 0;
}

static inline int rout_byte(RangeOut *o, unsigned char c) {
    if (o->n == o->cap && rout_grow(o, 1) < 0) return -1;
    o->b[o->n++] = c;
    return 0;
}

static void rout_carry(RangeOut *o) {
    Py_ssize_t i = o->n - 1;
    while (i >= 0 && o->b[i] == 0xFF) o->b[i--] = 0;
    if (i >= 0) o->b[i]++;
}

static inline __attribute__((always_inline)) int rout_put(RangeOut *o, limb st, limb fr, limb T) {
    limb r = o->rng / T;
    u128 low = (u128)o->low + (u128)r * st;
    if (low >> 64) rout_carry(o);
    o->low = (limb)low;
    o->rng = r * fr;  /* >= 2^16 */
    /* the top bytes of low that bring the range back to 2^56 or more, written without a loop:
     * all 8 stored, as many kept */
    int n = __builtin_clzll(o->rng) >> 3;
    if (o->n + 8 > o->cap && rout_grow(o, 8) < 0) return -1;
    uint64_t w = o->low;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    memcpy(o->b + o->n, &w, sizeof w);
    o->n += n;
    o->low <<= 8 * n;
    o->rng <<= 8 * n;
    return 0;
}

static int rout_uni(RangeOut *o, limb v, limb n) {  /* uniform(n), split past 2^40 */
    if (n <= RANGE_DIRECT) return rout_put(o, v, 1, n);
    limb h = (n - 1) >> 32, hi = v >> 32;
    if (rout_put(o, hi, 1, h + 1) < 0) return -1;
    return rout_put(o, v & 0xFFFFFFFFu, 1, hi < h ? (limb)1 << 32 : ((n - 1) & 0xFFFFFFFFu) + 1);
}


typedef struct {
    PyObject_HEAD
    int range;         /* format 6: the range coder (symbols kept until finish), else format 5 */
    Big low, rng, den, flow, frng, fden;
    int has_first;
    PyObject *done;    /* list: the written blocks after the first */
    Py_ssize_t count;
    char *side;
    Py_ssize_t side_n, side_cap;
    limb *syms;        /* range: the value's symbols, three limbs each */
    Py_ssize_t nsym, capsym, items;
    KeyCache keys;
    /* range, where live: the symbols coded as they come too, after the flag of no side stream,
     * so that a payload without one needs no second pass (its division per symbol then runs
     * beside the walk's own work instead of in a chain after it). The first side byte starts
     * the coding again after a side stream's head whose width (bitlen of its length) is guessed
     * as that of the last payload of the same kind (last_w[kind]: kind, from the value's type
     * and size, keeps one message and a batch of a thousand apart), its length and mode coded
     * as 0 (spec_w: that width; r and n: each of those two symbols' range / total and bytes
     * written when it was coded), so that the end adds them in where the guess was right; with
     * no guess, the end codes it all. The bytes are the same either way. */
    int live;
    RangeOut lout;
    int kind, spec_w;
    uint8_t last_w[64];
    limb spec_r[2];
    Py_ssize_t spec_n[2];
} WEnc;

static void wenc_dealloc(WEnc *e) {
    big_free(&e->low); big_free(&e->rng); big_free(&e->den);
    big_free(&e->flow); big_free(&e->frng); big_free(&e->fden);
    Py_XDECREF(e->done);
    keys_forget(&e->keys);
    PyMem_Free(e->side);
    PyMem_Free(e->syms);
    PyMem_Free(e->lout.b);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyObject *wenc_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    int range = 0;
    if (!PyArg_ParseTuple(args, "|p", &range)) return NULL;
    WEnc *e = (WEnc *)type->tp_alloc(type, 0);
    if (e == NULL) return NULL;
    e->range = range;
    big_init(&e->low); big_init(&e->rng); big_init(&e->den);
    big_init(&e->flow); big_init(&e->frng); big_init(&e->fden);
    big_set_u64(&e->rng, 1);
    big_set_u64(&e->den, 1);
    if (!range) {  /* format 5's written blocks */
        e->done = PyList_New(0);
        if (e->done == NULL) { Py_DECREF(e); return NULL; }
    }
    return (PyObject *)e;
}

static int wenc_end_block(WEnc *e) {
    if (!e->has_first) {
        if (big_copy(&e->flow, &e->low) < 0 || big_copy(&e->frng, &e->rng) < 0 || big_copy(&e->fden, &e->den) < 0)
            return -1;
        e->has_first = 1;
    } else {
        PyObject *l = big_to_long(&e->low), *r = big_to_long(&e->rng), *d = big_to_long(&e->den);
        PyObject *w = (l && r && d) ? PyObject_CallFunctionObjArgs(H_number, l, r, d, Py_True, NULL) : NULL;
        Py_XDECREF(l); Py_XDECREF(r); Py_XDECREF(d);
        if (w == NULL) return -1;
        int rc = PyList_Append(e->done, w);
        Py_DECREF(w);
        if (rc < 0) return -1;
    }
    e->low.n = 0;
    big_set_u64(&e->rng, 1);
    big_set_u64(&e->den, 1);
    return 0;
}

static int rsym_grow(WEnc *e) {
    Py_ssize_t cap = e->capsym ? 2 * e->capsym : 256;  /* most messages: one allocation */
    limb *b = PyMem_Realloc(e->syms, (size_t)cap * 3 * sizeof(limb));
    if (b == NULL) { PyErr_NoMemory(); return -1; }
    e->syms = b;
    e->capsym = cap;
    return 0;
}

static inline __attribute__((always_inline)) int rsym(WEnc *e, limb st, limb fr, limb T) {
    if (e->nsym == e->capsym && rsym_grow(e) < 0) return -1;
    limb *at = e->syms + 3 * e->nsym++;
    at[0] = st; at[1] = fr; at[2] = T;
    return e->live ? rout_put(&e->lout, st, fr, T) : 0;
}

/* Start e's live coding: the flag of no side stream, in e's own reused buffer. */
static int rlive_start(WEnc *e) {
    e->lout.n = 0;
    e->lout.low = 0;
    e->lout.rng = UINT64_MAX;
    e->live = 1;
    return rout_put(&e->lout, 1, FLAG_TOTAL - 1, FLAG_TOTAL);
}

/* uniform(n) past 2^40 for the range coder, as two symbols (spec §1.2); tm1 = n - 1, so that
 * n may be 2^64. */
static int rput_wide(WEnc *e, limb v, limb tm1) {
    limb h = tm1 >> 32, hi = v >> 32;
    if (rsym(e, hi, 1, h + 1) < 0) return -1;
    return rsym(e, v & 0xFFFFFFFFu, 1, hi < h ? (limb)1 << 32 : (tm1 & 0xFFFFFFFFu) + 1);
}

/* A symbol for the range coder: as it is, or past 2^40 (uniform) as two. */
static inline __attribute__((always_inline)) int rput(WEnc *e, limb st, limb fr, limb T) {
    if (T <= RANGE_DIRECT) return rsym(e, st, fr, T);
    if (fr != 1) { PyErr_SetString(PyExc_ValueError, "a symbol past 2^40 must be uniform"); return -1; }
    return rput_wide(e, st, T - 1);
}

/* A total from Python as total - 1, for totals 1..2^64. */
static int total_arg(PyObject *o, limb *tm1) {
    if (!PyLong_Check(o)) { PyErr_SetString(PyExc_TypeError, "total must be an int"); return -1; }
    PyObject *one = PyLong_FromLong(1);
    PyObject *m = one ? PyNumber_Subtract(o, one) : NULL;
    Py_XDECREF(one);
    if (m == NULL) return -1;
    *tm1 = PyLong_AsUnsignedLongLong(m);
    Py_DECREF(m);
    if (*tm1 == (limb)-1 && PyErr_Occurred()) {
        PyErr_SetString(PyExc_ValueError, "a total must be 1..2^64");
        return -1;
    }
    return 0;
}

static int wput_blocks(WEnc *e, limb st, limb fr, limb T);

/* A symbol on either coder: the range coder's inline (most of an encode), format 5's blocks not. */
static inline __attribute__((always_inline)) int wput(WEnc *e, limb st, limb fr, limb T) {
    if (e->range) return rput(e, st, fr, T);
    return wput_blocks(e, st, fr, T);
}

static int wput_blocks(WEnc *e, limb st, limb fr, limb T) {
    e->count++;
    if (big_mul(&e->low, T) < 0 || big_addmul(&e->low, &e->rng, st) < 0) return -1;
    if (big_mul(&e->rng, fr) < 0 || big_mul(&e->den, T) < 0) return -1;
    int over;
    if (block_over(&e->den, &e->rng, &over) < 0) return -1;
    return over ? wenc_end_block(e) : 0;
}

/* The live coding again from the start, after a side stream's head of e->last_w's width (see
 * WEnc); with no such guess, the live coding stops and the end codes everything. */
static int rspec_start(WEnc *e) {
    int w = e->last_w[e->kind];
    RangeOut *o = &e->lout;
    if (w < 1 || w > 41) {  /* past 41, the length is two symbols: no payload is that long */
        e->live = 0;
        return 0;
    }
    o->n = 0;
    o->low = 0;
    o->rng = UINT64_MAX;
    if (rout_put(o, 0, 1, FLAG_TOTAL) < 0 || rout_put(o, (limb)w, 1, 64) < 0) return -1;
    limb totals[2] = {(limb)1 << (w - 1), SIDE_MODES};
    for (int j = w > 1 ? 0 : 1; j < 2; j++) {
        e->spec_r[j] = o->rng / totals[j];
        e->spec_n[j] = o->n;
        if (rout_put(o, 0, 1, totals[j]) < 0) return -1;
    }
    for (Py_ssize_t i = 0; i < e->nsym; i++)
        if (rout_put(o, e->syms[3 * i], e->syms[3 * i + 1], e->syms[3 * i + 2]) < 0) return -1;
    e->spec_w = w;
    return 0;
}

/* d added to the number o has written (its bytes, then its window) at the place of the window
 * when o had written at bytes: what coding d / r as a symbol's start then would have added. */
static void rout_add(RangeOut *o, limb d, Py_ssize_t at) {
    unsigned carry = 0;
    for (Py_ssize_t q = at + 7; q >= 0 && (q >= at || carry); q--) {
        unsigned s = (q >= at ? (unsigned)(d >> (8 * (at + 7 - q))) & 0xFF : 0) + carry;
        if (q >= o->n) {  /* in the window: its byte q - n from the top */
            int shift = 8 * (int)(7 - (q - o->n));
            s += (unsigned)(o->low >> shift) & 0xFF;
            o->low = (o->low & ~((limb)0xFF << shift)) | ((limb)(s & 0xFF) << shift);
        } else {
            s += o->b[q];
            o->b[q] = (unsigned char)s;
        }
        carry = s >> 8;
    }
}

static int wbytes(WEnc *e, const char *p, Py_ssize_t n) {
    if (n && e->live && !e->side_n && !e->spec_w && rspec_start(e) < 0) return -1;
    if (e->side_n + n > e->side_cap) {
        Py_ssize_t cap = 2 * (e->side_n + n) + 64;
        char *s = PyMem_Realloc(e->side, (size_t)cap);
        if (s == NULL) { PyErr_NoMemory(); return -1; }
        e->side = s;
        e->side_cap = cap;
    }
    memcpy(e->side + e->side_n, p, (size_t)n);
    e->side_n += n;
    return 0;
}

static PyObject *wenc_put_py(WEnc *e, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "put(start, freq, total)"); return NULL; }
    limb st, fr, T, tm1;
    if (e->range) {  /* totals up to 2^64 (uniform symbols past 2^40) */
        if (u64_arg(args[0], &st, "start") < 0 || u64_arg(args[1], &fr, "freq") < 0 || total_arg(args[2], &tm1) < 0)
            return NULL;
        if (fr == 0 || st > tm1 || fr - 1 > tm1 - st) {
            PyErr_SetString(PyExc_ValueError, "put() needs 0 <= start < start + freq <= total");
            return NULL;
        }
        if (tm1 >= RANGE_DIRECT) {
            if (fr != 1) { PyErr_SetString(PyExc_ValueError, "a symbol past 2^40 must be uniform"); return NULL; }
            if (rput_wide(e, st, tm1) < 0) return NULL;
        } else if (rsym(e, st, fr, tm1 + 1) < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    if (u64_arg(args[0], &st, "start") < 0 || u64_arg(args[1], &fr, "freq") < 0 || u64_arg(args[2], &T, "total") < 0)
        return NULL;
    if (fr == 0 || st >= T || fr > T - st) {
        PyErr_SetString(PyExc_ValueError, "put() needs 0 <= start < start + freq <= total");
        return NULL;
    }
    if (wput(e, st, fr, T) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *wenc_put_bytes(WEnc *e, PyObject *arg) {
    if (!PyBytes_Check(arg)) { PyErr_SetString(PyExc_TypeError, "put_bytes() takes bytes"); return NULL; }
    if (wbytes(e, PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg)) < 0) return NULL;
    Py_RETURN_NONE;
}

/* parts(): (first block's (low, rng, den) or None, later blocks written, low, rng, den, side,
 * symbols), what zeroc.learned._coder.finish takes. */
static PyObject *wenc_spend(WEnc *e, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    e->items += n;
    Py_RETURN_NONE;
}

/* finish(engine): the format-6 payload (spec §1.2): the head, the value's symbols, the
 * termination, the side stream (compressed by engine.compress when that is smaller). */
static PyObject *range_payload(WEnc *e, PyObject *engine, const char *head, Py_ssize_t hn, RangeOut *keep);

static PyObject *wenc_finish(WEnc *e, PyObject *engine) {
    if (!e->range) { PyErr_SetString(PyExc_TypeError, "finish() is the range coder's"); return NULL; }
    return range_payload(e, engine, NULL, 0, NULL);
}

/* The payload after head's hn bytes (a frame's head, or none); the coder's bytes in keep's
 * buffer, kept for the next payload, where keep is given. */
static PyObject *range_payload(WEnc *e, PyObject *engine, const char *head, Py_ssize_t hn, RangeOut *keep) {
    RangeOut o = {keep ? keep->b : NULL, 0, keep ? keep->cap : 0, 0, UINT64_MAX};
    PyObject *side = NULL, *out = NULL;
    limb mode = 0, L = 0;
    int width = 0, live = 0;
    Py_ssize_t heads = 1;
    if (e->side_n) {
        side = PyBytes_FromStringAndSize(e->side, e->side_n);
        if (side == NULL) goto done;
        if (engine != Py_None) {
            /* engine.compress_in(side, symbols) where the engine weighs the value's symbols
             * (the codec's side engine), else engine.compress(side): as _coder.finish does */
            PyObject *res;
            if (_PyType_Lookup(Py_TYPE(engine), S_compress_in) != NULL) {
                PyObject *n = PyLong_FromSsize_t(e->nsym);
                res = n ? PyObject_CallMethodObjArgs(engine, S_compress_in, side, n, NULL) : NULL;
                Py_XDECREF(n);
            } else {
                res = PyObject_CallMethodOneArg(engine, S_compress, side);
            }
            if (res == NULL) goto done;
            if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2 || !PyBytes_Check(PyTuple_GET_ITEM(res, 1))) {
                Py_DECREF(res);
                PyErr_SetString(PyExc_TypeError, "engine.compress() must give (method, bytes)");
                goto done;
            }
            PyObject *packed = PyTuple_GET_ITEM(res, 1);
            if (PyBytes_GET_SIZE(packed) < e->side_n) {
                mode = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(res, 0));
                if (PyErr_Occurred() || mode >= SIDE_MODES) {
                    Py_DECREF(res);
                    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "side stream mode");
                    goto done;
                }
                Py_INCREF(packed);
                Py_SETREF(side, packed);
            }
            Py_DECREF(res);
        }
        L = (limb)PyBytes_GET_SIZE(side);
        width = 64 - __builtin_clzll(L);
        heads = 3;
        if (width > 1) heads += (((limb)1 << (width - 1)) > RANGE_DIRECT) ? 2 : 1;
    }
    /* coded as the walk went (after the right side-stream head where there is one): the end,
     * and the side stream's length and mode where they were coded as 0, is all that is left */
    live = e->live && (e->side_n ? e->spec_w == width : !e->spec_w);
    if (live) {
        o = e->lout;
        if (width > 1) rout_add(&o, e->spec_r[0] * (L - ((limb)1 << (width - 1))), e->spec_n[0]);
        if (width) rout_add(&o, e->spec_r[1] * mode, e->spec_n[1]);
    } else {
        /* a symbol of at most 2^40 adds at most 6 bytes */
        if (o.cap < 6 * e->nsym + 64 && rout_grow(&o, 6 * e->nsym) < 0) goto done;
        if (side != NULL) {
            if (rout_put(&o, 0, 1, FLAG_TOTAL) < 0 || rout_put(&o, (limb)width, 1, 64) < 0) goto done;
            if (width > 1 && rout_uni(&o, L - ((limb)1 << (width - 1)), (limb)1 << (width - 1)) < 0) goto done;
            if (rout_put(&o, mode, 1, SIDE_MODES) < 0) goto done;
        } else if (rout_put(&o, 1, FLAG_TOTAL - 1, FLAG_TOTAL) < 0) {
            goto done;
        }
        for (Py_ssize_t i = 0; i < e->nsym; i++)
            if (rout_put(&o, e->syms[3 * i], e->syms[3 * i + 1], e->syms[3 * i + 2]) < 0) goto done;
    }
    int contained = side != NULL;
    int m;
    u128 k = 0, end = (u128)o.low + o.rng;
    for (m = 0; m <= 8; m++) {
        u128 u = (u128)1 << (64 - 8 * m);
        k = ((u128)o.low + u - 1) / u;
        if (contained ? (k + 1) * u <= end : k * u < end) break;
    }
    if (m < 8 ? (k >> (8 * m)) != 0 : 0) {
        rout_carry(&o);
        k &= ((u128)1 << (8 * m)) - 1;
    }
    for (int j = m - 1; j >= 0; j--)
        if (rout_byte(&o, (unsigned char)(k >> (8 * j))) < 0) goto done;
    Py_ssize_t total = o.n + (side ? PyBytes_GET_SIZE(side) : 0);
    Py_ssize_t count = e->items + heads + e->nsym;
    if (count > MAX_SYMBOLS + PER_BYTE * total) {
        PyErr_Format(H_Limit, "value needs %zd learned-model symbols, more than its payload may hold", count);
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, hn + total);
    if (out == NULL) goto done;
    if (hn) memcpy(PyBytes_AS_STRING(out), head, (size_t)hn);
    memcpy(PyBytes_AS_STRING(out) + hn, o.b, (size_t)o.n);
    if (side) memcpy(PyBytes_AS_STRING(out) + hn + o.n, PyBytes_AS_STRING(side), (size_t)PyBytes_GET_SIZE(side));
    if (width) e->last_w[e->kind] = (uint8_t)width;  /* the next guess for this kind */
done:
    if (live) {  /* its buffer, grown or not, stays e's (keep's is untouched) */
        e->lout.b = o.b;
        e->lout.cap = o.cap;
    } else if (keep) {
        keep->b = o.b;
        keep->cap = o.cap;
    } else {
        PyMem_Free(o.b);
    }
    e->live = 0;
    e->spec_w = 0;
    Py_XDECREF(side);
    return out;
}

static PyObject *wenc_parts(WEnc *e, PyObject *unused) {
    if (e->range) { PyErr_SetString(PyExc_TypeError, "parts() is the block coder's"); return NULL; }
    PyObject *first;
    if (e->has_first) {
        first = Py_BuildValue("(NNN)", big_to_long(&e->flow), big_to_long(&e->frng), big_to_long(&e->fden));
    } else {
        first = Py_None;
        Py_INCREF(first);
    }
    if (first == NULL) return NULL;
    return Py_BuildValue("(NONNNNn)", first, e->done, big_to_long(&e->low), big_to_long(&e->rng),
                         big_to_long(&e->den), PyBytes_FromStringAndSize(e->side, e->side_n), e->count);
}

static PyMethodDef wenc_methods[] = {
    {"put", (PyCFunction)(void (*)(void))wenc_put_py, METH_FASTCALL, "Code the symbol [start, start + freq) of total."},
    {"put_bytes", (PyCFunction)wenc_put_bytes, METH_O, "Raw bytes to the side stream."},
    {"parts", (PyCFunction)wenc_parts, METH_NOARGS, "What _coder.finish takes."},
    {"spend", (PyCFunction)wenc_spend, METH_O, "Items on the common path, counted as symbols."},
    {"finish", (PyCFunction)wenc_finish, METH_O, "The format-6 payload."},
    {NULL},
};

static PyTypeObject WEncType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zeroc.learned._native.WalkEncoder",
    .tp_basicsize = sizeof(WEnc),
    .tp_dealloc = (destructor)wenc_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Format 5's block coder on limbs, for the general walk.",
    .tp_methods = wenc_methods,
    .tp_new = wenc_new,
};

/* ---- WDec ---- */

typedef struct {
    PyObject_HEAD
    int range;         /* format 6: the range coder, else format 5's block coder */
    Big x, R, den, num, bden, brng;
    PyObject *data, *buf;
    Py_ssize_t len, arith, start, nbytes, budget, pos;
    int blocks;
    limb rx, rrng, rr; /* range: the place above low, the range, the last slot's width */
    Py_ssize_t rn;     /* range: bytes shifted in past the first 8 */
    int contained;     /* range: side bytes follow the arithmetic part */
    KeyCache keys;     /* (the decoded dicts are the decoder's own until the value is returned) */
} WDec;

static void wdec_dealloc(WDec *d) {
    big_free(&d->x); big_free(&d->R); big_free(&d->den); big_free(&d->num);
    big_free(&d->bden); big_free(&d->brng);
    keys_forget(&d->keys);
    Py_XDECREF(d->data);
    Py_XDECREF(d->buf);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static int wdec_load(WDec *d, Py_ssize_t start, Py_ssize_t end) {
    d->start = start;
    d->nbytes = end - start;
    if (big_from_bytes(&d->num, (const unsigned char *)PyBytes_AS_STRING(d->data) + start, end - start) < 0) return -1;
    if (big_copy(&d->x, &d->num) < 0) return -1;
    big_set_u64(&d->R, 1);
    if (big_shl(&d->R, 8 * (end - start)) < 0) return -1;
    big_set_u64(&d->den, 1);
    big_set_u64(&d->bden, 1);
    big_set_u64(&d->brng, 1);
    return 0;
}

static inline unsigned char rbyte(WDec *d, Py_ssize_t at) {
    return at < d->len ? (unsigned char)PyBytes_AS_STRING(d->data)[at] : 0;
}

/* The range decoder's refill after a symbol: the bytes of data (past its len, zeros: rbyte's)
 * that bring the range back to 2^56 or more, shifted into x in one step (whether a symbol needs
 * one, and how many, is a branch no predictor guesses). rng >= 2^16 (rr >= 2^56 / 2^40), and
 * x < rng, so nothing is lost. */
static inline __attribute__((always_inline)) void range_refill(limb *x, limb *rng, Py_ssize_t *rn,
                                                               const unsigned char *data, Py_ssize_t len) {
    int n = __builtin_clzll(*rng) >> 3;
    Py_ssize_t at = 8 + *rn;
    uint64_t w = 0;
    if (at + 8 <= len) {
        memcpy(&w, data + at, sizeof w);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        w = __builtin_bswap64(w);
#endif
    } else {
        for (int j = 0; j < 8; j++) w = (w << 8) | (at + j < len ? data[at + j] : 0);
    }
    *x = (*x << (8 * n)) | ((w >> 1) >> (63 - 8 * n));
    *rng <<= 8 * n;
    *rn += n;
}

/* The slot of the next symbol of total T; x becomes x*T - slot*R (the caller then takes). */
static int wslot_blocks(WDec *d, limb T, limb *s) {
    if (big_mul(&d->x, T) < 0 || big_reserve(&d->x, d->R.n + 1) < 0) return -1;
    *s = big_divmod(&d->x, &d->R);
    return 0;
}

static inline __attribute__((always_inline)) int wslot(WDec *d, limb T, limb *s) {
    if (!d->range) return wslot_blocks(d, T, s);
    d->rr = d->rrng / T;
    *s = d->rx / d->rr;
    if (*s >= T) {
        derr("learned-model payload is not one this model writes (a slot past the total)");
        return -1;
    }
    return 0;
}

static int wdec_next_block(WDec *d) {
    PyObject *num = big_to_long(&d->num), *den = big_to_long(&d->den), *x = big_to_long(&d->x),
             *R = big_to_long(&d->R), *nb = PyLong_FromSsize_t(d->nbytes);
    PyObject *w = (num && den && x && R && nb) ? PyObject_CallFunctionObjArgs(H_block, num, den, x, R, nb, NULL) : NULL;
    Py_XDECREF(num); Py_XDECREF(den); Py_XDECREF(x); Py_XDECREF(R); Py_XDECREF(nb);
    if (w == NULL) return -1;
    if (!PyBytes_Check(w)) { Py_DECREF(w); PyErr_SetString(PyExc_TypeError, "block end"); return -1; }
    Py_ssize_t n = PyBytes_GET_SIZE(w), end = d->start + n;
    int same = end <= d->arith && memcmp(PyBytes_AS_STRING(d->data) + d->start, PyBytes_AS_STRING(w), (size_t)n) == 0;
    Py_DECREF(w);
    if (!same) {
        derr("learned-model payload is not in canonical form (a block ends otherwise)");
        return -1;
    }
    return wdec_load(d, end, d->arith < end + BLOCK_BYTES ? d->arith : end + BLOCK_BYTES);
}

/* Take the symbol [st, st + fr) of T whose slot s wslot found. */
static int wtake_blocks(WDec *d, limb s, limb st, limb fr, limb T);

static inline __attribute__((always_inline)) int wtake(WDec *d, limb s, limb st, limb fr, limb T) {
    if (--d->budget < 0) {
        derr("learned-model payload asks for more symbols than it can hold");
        return -1;
    }
    if (!d->range) return wtake_blocks(d, s, st, fr, T);
    d->rx -= d->rr * st;
    d->rrng = d->rr * fr;
    range_refill(&d->rx, &d->rrng, &d->rn, (const unsigned char *)PyBytes_AS_STRING(d->data), d->len);
    return 0;
}

static int wtake_blocks(WDec *d, limb s, limb st, limb fr, limb T) {
    if (big_addmul(&d->x, &d->R, s - st) < 0 || big_mul(&d->R, fr) < 0 || big_mul(&d->den, T) < 0) return -1;
    if (d->blocks) {
        if (big_mul(&d->bden, T) < 0 || big_mul(&d->brng, fr) < 0) return -1;
        int over;
        if (block_over(&d->bden, &d->brng, &over) < 0) return -1;
        if (over) return wdec_next_block(d);
    }
    return 0;
}

/* uniform(tm1 + 1) past 2^40 on the range coder: split, as the encoder did (spec §1.2). */
static int wuni_wide(WDec *d, limb tm1, limb *v) {
    limb h = tm1 >> 32, hi, lo;
    if (wslot(d, h + 1, &hi) < 0 || wtake(d, hi, hi, 1, h + 1) < 0) return -1;
    limb t = hi < h ? (limb)1 << 32 : (tm1 & 0xFFFFFFFFu) + 1;
    if (wslot(d, t, &lo) < 0 || wtake(d, lo, lo, 1, t) < 0) return -1;
    *v = (hi << 32) | lo;
    return 0;
}

static inline int wuni(WDec *d, limb n, limb *v) {
    if (d->range && n > RANGE_DIRECT) return wuni_wide(d, n - 1, v);
    if (wslot(d, n, v) < 0) return -1;
    return wtake(d, *v, *v, 1, n);
}

/* Items on the common path, counted against the payload's bound (spec §1.2). */
static int wspend(WDec *d, Py_ssize_t n) {
    d->budget -= n;
    if (n < 0 || d->budget < 0) {
        derr("learned-model payload asks for more items than it can hold");
        return -1;
    }
    return 0;
}

/* The head read (Decoder.__init__ with blocks) into d, fresh or emptied: -1 on an error. */
static int wdec_start(WDec *d, PyObject *data, PyObject *engine, PyObject *max_size, int range) {
    big_free(&d->x); big_free(&d->R); big_free(&d->den); big_free(&d->num);  /* (free: init) */
    big_free(&d->bden); big_free(&d->brng);
    keys_forget(&d->keys);
    Py_INCREF(data);
    Py_XSETREF(d->data, data);
    Py_CLEAR(d->buf);
    d->len = d->arith = PyBytes_GET_SIZE(data);
    d->blocks = 0;
    d->range = range;
    d->pos = d->rn = 0;
    if (range) {
        d->rx = 0;
        for (int j = 0; j < 8; j++) d->rx = (d->rx << 8) | rbyte(d, j);
        d->rrng = UINT64_MAX;
        d->budget = MAX_SYMBOLS + PER_BYTE * d->len;
    } else {
        if (wdec_load(d, 0, d->len < BLOCK_BYTES ? d->len : BLOCK_BYTES) < 0) return -1;
        d->budget = MAX_SYMBOLS + 8 + PER_BYTE * d->len;
    }
    limb s, size = 0, mode = 0;
    if (wslot(d, FLAG_TOTAL, &s) < 0) return -1;
    if (s < 1) {
        limb width, rest;
        if (wtake(d, s, 0, 1, FLAG_TOTAL) < 0 || wuni(d, 64, &width) < 0) return -1;
        if (width > 1) {
            if (wuni(d, (limb)1 << (width - 1), &rest) < 0) return -1;
            size = ((limb)1 << (width - 1)) + rest;
        } else {
            size = width;
        }
        if (wuni(d, 3, &mode) < 0) return -1;
    } else if (wtake(d, s, 1, FLAG_TOTAL - 1, FLAG_TOTAL) < 0) {
        return -1;
    }
    if (size > (limb)d->len) { derr("side stream is longer than the payload"); return -1; }
    d->arith = d->len - (Py_ssize_t)size;
    d->contained = size > 0;
    d->blocks = !range;
    big_set_u64(&d->bden, 1);
    big_set_u64(&d->brng, 1);
    d->buf = PyBytes_FromStringAndSize(PyBytes_AS_STRING(data) + d->arith, (Py_ssize_t)size);
    if (d->buf == NULL) return -1;
    if (mode != 0) {  /* _walk.side: decompressed with the model's engine, checked */
        PyObject *m = PyLong_FromUnsignedLongLong(mode);
        PyObject *out = m ? PyObject_CallFunctionObjArgs(H_side, engine, m, d->buf, max_size, NULL) : NULL;
        Py_XDECREF(m);
        if (out == NULL) return -1;
        if (!PyBytes_Check(out)) { Py_DECREF(out); PyErr_SetString(PyExc_TypeError, "side"); return -1; }
        Py_SETREF(d->buf, out);
    }
    return 0;
}

/* WalkDecoder(data, engine, max_size, range=False): the head read. */
static PyObject *wdec_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *data, *engine, *max_size;
    int range = 0;
    if (!PyArg_ParseTuple(args, "O!OO|p", &PyBytes_Type, &data, &engine, &max_size, &range)) return NULL;
    WDec *d = (WDec *)type->tp_alloc(type, 0);
    if (d == NULL) return NULL;
    if (wdec_start(d, data, engine, max_size, range) < 0) {
        Py_DECREF(d);
        return NULL;
    }
    return (PyObject *)d;
}

static PyObject *wdec_peek(WDec *d, PyObject *arg) {
    limb T;
    if (u64_arg(arg, &T, "total") < 0) return NULL;
    if (T == 0) { PyErr_SetString(PyExc_ValueError, "peek() needs total > 0"); return NULL; }
    if (d->range) {
        if (T > RANGE_DIRECT) { PyErr_SetString(PyExc_ValueError, "peek() of a total past 2^40"); return NULL; }
        limb sl = d->rx / (d->rrng / T);
        if (sl >= T) return derr("learned-model payload is not one this model writes (a slot past the total)");
        return PyLong_FromUnsignedLongLong(sl);
    }
    Big t;
    big_init(&t);
    if (big_copy(&t, &d->x) < 0 || big_mul(&t, T) < 0 || big_reserve(&t, d->R.n + 1) < 0) { big_free(&t); return NULL; }
    limb s = big_divmod(&t, &d->R);
    big_free(&t);
    return PyLong_FromUnsignedLongLong(s);
}

static PyObject *wdec_take_py(WDec *d, PyObject *const *args, Py_ssize_t nargs) {
    limb st, fr, T, s;
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "take(start, freq, total)"); return NULL; }
    if (u64_arg(args[0], &st, "start") < 0 || u64_arg(args[1], &fr, "freq") < 0 || u64_arg(args[2], &T, "total") < 0)
        return NULL;
    if (fr == 0 || st >= T || fr > T - st) {
        PyErr_SetString(PyExc_ValueError, "take() needs 0 <= start < start + freq <= total");
        return NULL;
    }
    if (d->range && T > RANGE_DIRECT) {
        if (fr != 1) { PyErr_SetString(PyExc_ValueError, "take() of a total past 2^40"); return NULL; }
        if (wuni(d, T, &s) < 0) return NULL;
        if (s != st) { PyErr_SetString(PyExc_ValueError, "take() of a symbol the payload does not hold"); return NULL; }
        Py_RETURN_NONE;
    }
    if (wslot(d, T, &s) < 0) return NULL;
    if (s < st || s - st >= fr) {  /* not the symbol the slot names: undo nothing, refuse */
        PyErr_SetString(PyExc_ValueError, "take() of a symbol the payload does not hold");
        return NULL;
    }
    if (wtake(d, s, st, fr, T) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *wdec_uniform(WDec *d, PyObject *arg) {
    limb n, v;
    if (d->range) {  /* n up to 2^64 */
        limb tm1;
        if (total_arg(arg, &tm1) < 0) return NULL;
        if (tm1 >= RANGE_DIRECT ? wuni_wide(d, tm1, &v) < 0 : wuni(d, tm1 + 1, &v) < 0) return NULL;
        return PyLong_FromUnsignedLongLong(v);
    }
    if (u64_arg(arg, &n, "n") < 0) return NULL;
    if (n == 0) { PyErr_SetString(PyExc_ValueError, "uniform() needs n > 0"); return NULL; }
    if (wuni(d, n, &v) < 0) return NULL;
    return PyLong_FromUnsignedLongLong(v);
}

static PyObject *wtake_bytes(WDec *d, Py_ssize_t n) {
    if (n < 0 || n > PyBytes_GET_SIZE(d->buf) - d->pos) return derr("escaped bytes run past the side stream");
    PyObject *out = PyBytes_FromStringAndSize(PyBytes_AS_STRING(d->buf) + d->pos, n);
    if (out) d->pos += n;
    return out;
}

static PyObject *wdec_take_bytes(WDec *d, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    return wtake_bytes(d, n);
}

static PyObject *wdec_spend(WDec *d, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (wspend(d, n) < 0) return NULL;
    Py_RETURN_NONE;
}

/* The payload's bytes at [a, b) as the top of a 64-bit window (zero past the end). */
static limb window(WDec *d, Py_ssize_t a, Py_ssize_t b) {
    limb w = 0;
    for (Py_ssize_t j = 0; j < 8; j++) w = (w << 8) | (a + j < b ? rbyte(d, a + j) : 0);
    return w;
}

/* finish(): format 6's final checks (spec §1.2): the side stream read to its end, and the
 * arithmetic part exactly what an encoder writes for the final interval. */
static PyObject *wdec_finish(WDec *d, PyObject *unused) {
    if (!d->range) { PyErr_SetString(PyExc_TypeError, "finish() is the range coder's"); return NULL; }
    if (d->pos != PyBytes_GET_SIZE(d->buf)) return derr("learned-model payload has unread escaped bytes");
    Py_ssize_t n = d->rn, m = d->arith - n;
    int ok = 0 <= m && m <= 8;
    if (ok) {
        limb p = window(d, n, d->arith), code = window(d, n, n + 8);
        __int128 xp = (__int128)d->rx - (__int128)(code - p);
        u128 u = (u128)1 << (64 - 8 * m), rng = d->rrng;
        ok = xp >= 0 && (u128)xp < u && (d->contained ? (u128)xp + u <= rng : (u128)xp < rng);
        for (Py_ssize_t mm = 0; ok && mm < m; mm++) {
            u128 uu = (u128)1 << (64 - 8 * mm);
            u128 y = (u128)xp + (((u128)0 - p) & (uu - 1));
            if (d->contained ? y + uu <= rng : y < rng) ok = 0;
        }
    }
    if (!ok) return derr("learned-model payload is not in canonical form (corrupt or wrong model)");
    Py_RETURN_NONE;
}

/* state(): what zeroc.learned._walk.finish checks (Decoder.finish). */
static PyObject *wdec_state(WDec *d, PyObject *unused) {
    return Py_BuildValue("(OnnnnNNNNn)", d->data, d->start, d->arith, d->pos, PyBytes_GET_SIZE(d->buf),
                         big_to_long(&d->num), big_to_long(&d->x), big_to_long(&d->R), big_to_long(&d->den),
                         d->nbytes);
}

static PyMethodDef wdec_methods[] = {
    {"peek", (PyCFunction)wdec_peek, METH_O, "The slot in [0, total) of the next symbol."},
    {"take", (PyCFunction)(void (*)(void))wdec_take_py, METH_FASTCALL, "Take the symbol [start, start + freq) of total."},
    {"uniform", (PyCFunction)wdec_uniform, METH_O, "The next uniform symbol in [0, n)."},
    {"take_bytes", (PyCFunction)wdec_take_bytes, METH_O, "The next n bytes of the side stream."},
    {"state", (PyCFunction)wdec_state, METH_NOARGS, "What the final check reads."},
    {"spend", (PyCFunction)wdec_spend, METH_O, "Items on the common path, counted as symbols."},
    {"finish", (PyCFunction)wdec_finish, METH_NOARGS, "Format 6's final checks."},
    {NULL},
};

static PyTypeObject WDecType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zeroc.learned._native.WalkDecoder",
    .tp_basicsize = sizeof(WDec),
    .tp_dealloc = (destructor)wdec_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Format 5's block decoder on limbs, for the general walk.",
    .tp_methods = wdec_methods,
    .tp_new = wdec_new,
};

/* ---- Program ---- */

static void program_dealloc(Program *p) {
    for (Py_ssize_t i = 0; i < p->n; i++) {
        WNode *w = &p->nodes[i];
        Py_XDECREF(w->py); Py_XDECREF(w->by_str); Py_XDECREF(w->by_int); Py_XDECREF(w->by_key);
        str_index_free(w->sidx);
        int_index_free(w->iidx);
        Py_XDECREF((PyObject *)w->table); Py_XDECREF(w->pow10_obj); Py_XDECREF(w->prefix); Py_XDECREF(w->suffix);
        Py_XDECREF(w->literals); Py_XDECREF(w->keys); Py_XDECREF(w->preds);
        PyMem_Free(w->kids);
        PyMem_Free(w->rule);
        PyMem_Free(w->plain);
        PyMem_Free(w->guide);
        chars_free(w->chars);
    }
    PyMem_Free(p->nodes_mem);
    Py_XDECREF(p->engine);
    Py_XDECREF(p->spare[0]);
    Py_XDECREF(p->spare[1]);
    PyMem_Free(p->obuf);
    Py_XDECREF(p->dspare);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static int index_arg(PyObject *o, Py_ssize_t n, Py_ssize_t *out, int optional) {
    Py_ssize_t v = PyLong_AsSsize_t(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < (optional ? -1 : 0) || v >= n) {
        PyErr_SetString(PyExc_ValueError, "a node index outside the program");
        return -1;
    }
    *out = v;
    return 0;
}

#define GETREF(dst, src) do { dst = (src); Py_INCREF(dst); } while (0)

/* The entries of True, False and None in a node's by_key dict (as_key's own keys for them, made
 * once here), so that looking those values up calls no Python. */
static int const_entries(WNode *w) {
    PyObject *vals[3] = {Py_True, Py_False, Py_None};
    if (H_as_key == NULL) { PyErr_SetString(PyExc_TypeError, "a program before bind()"); return -1; }
    for (int j = 0; j < 3; j++) {
        w->konst[j] = -1;
        if (PyDict_GET_SIZE(w->by_key) == 0) continue;
        PyObject *k = PyObject_CallOneArg(H_as_key, vals[j]);
        if (k == NULL) return -1;
        PyObject *r = PyDict_GetItemWithError(w->by_key, k);
        Py_DECREF(k);
        if (r == NULL) {
            if (PyErr_Occurred()) return -1;
            continue;
        }
        w->konst[j] = PyLong_AsSsize_t(r);
        if (w->konst[j] < 0) { PyErr_Clear(); w->konst[j] = -1; }
    }
    return 0;
}

/* A flag of a node from a Python truth value (in program_new, whose failure is ``fail``). */
#define SETFLAG(field, obj)                         \
    do {                                            \
        int truth_ = PyObject_IsTrue(obj);          \
        if (truth_ < 0) goto fail;                  \
        (field) = (uint8_t)truth_;                  \
    } while (0)

/* Categoricals of more slots than this decode through a guide instead of their slot array. */
#define GUIDE_MIN 256
#define GUIDE_SHIFT 4  /* slots a guide bucket covers: 2^GUIDE_SHIFT */

/* A large categorical's guide: the entry holding the first slot of each bucket of 2^GUIDE_SHIFT
 * slots from esc, so that a slot's entry is that one or a few steps after it (entries are in slot
 * order, the last followed by one starting at the total). The guide is a sixteenth of the slot
 * array's size: when other work has run between two messages, far less of it is out of the
 * caches, and a slot costs the entries' line alone more often. In the bench's interleaving a
 * faker user's decode took 5.3 us with it, 6.5 with the slot array (8 slots a bucket: 5.4; 64:
 * 5.1, but slower where the tables stay in cache). */
static int cat_guide(WNode *w) {
    if (w->slot16 == NULL || w->total - w->esc <= GUIDE_MIN) return 0;
    size_t n = (size_t)((w->total - w->esc - 1) >> GUIDE_SHIFT) + 1;
    w->guide = PyMem_Malloc(n * sizeof(uint16_t));
    if (w->guide == NULL) { PyErr_NoMemory(); return -1; }
    for (size_t j = 0; j < n; j++) w->guide[j] = w->slot16[j << GUIDE_SHIFT];
    w->slot16 = w->guide;
    w->guided = 1;
    return 0;
}

/* Program(nodes): each node a tuple (kind, py node, esc, total, other, a, b, c, kids, extra);
 * zeroc/learned/_walk.py makes them, from a model the reader has checked. */
static PyObject *program_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyTuple_Type, &list)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(list);
    Program *p = (Program *)type->tp_alloc(type, 0);
    if (p == NULL) return NULL;
    p->nodes_mem = PyMem_Calloc((size_t)(n ? n : 1) * sizeof(WNode) + 63, 1);
    if (p->nodes_mem == NULL) { Py_DECREF(p); return PyErr_NoMemory(); }
    p->nodes = (WNode *)(((uintptr_t)p->nodes_mem + 63) & ~(uintptr_t)63);
    p->n = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        WNode *w = &p->nodes[i];
        PyObject *t = PyTuple_GET_ITEM(list, i), *kids, *extra;
        int kind;
        limb esc, total;
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 10) goto bad;
        kind = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
        if (kind < K_PY || kind > K_SUM) goto bad;
        w->kind = kind;
        GETREF(w->py, PyTuple_GET_ITEM(t, 1));
        if (u64_arg(PyTuple_GET_ITEM(t, 2), &esc, "esc") < 0 || u64_arg(PyTuple_GET_ITEM(t, 3), &total, "total") < 0)
            goto fail;
        w->esc = esc;
        w->total = total;
        if (kind != K_PY && kind != K_RAW && (esc == 0 || esc >= total)) goto bad;
        if (index_arg(PyTuple_GET_ITEM(t, 4), n, &w->other, 1) < 0 || index_arg(PyTuple_GET_ITEM(t, 5), n, &w->a, 1) < 0 ||
            index_arg(PyTuple_GET_ITEM(t, 6), n, &w->b, 1) < 0 || index_arg(PyTuple_GET_ITEM(t, 7), n, &w->c, 1) < 0)
            goto fail;
        kids = PyTuple_GET_ITEM(t, 8);
        extra = PyTuple_GET_ITEM(t, 9);
        if (!PyTuple_Check(kids) || !PyTuple_Check(extra)) goto bad;
        w->nkids = PyTuple_GET_SIZE(kids);
        w->kids = PyMem_Calloc((size_t)(w->nkids ? w->nkids : 1), sizeof(Py_ssize_t));
        if (w->kids == NULL) { PyErr_NoMemory(); goto fail; }
        for (Py_ssize_t j = 0; j < w->nkids; j++)
            if (index_arg(PyTuple_GET_ITEM(kids, j), n, &w->kids[j], 0) < 0) goto fail;
        Py_ssize_t ne = PyTuple_GET_SIZE(extra);
        switch (kind) {
        case K_CAT:
            if (ne != 6 || Py_TYPE(PyTuple_GET_ITEM(extra, 3)) != &TableType || w->other < 0) goto bad;
            GETREF(w->by_str, PyTuple_GET_ITEM(extra, 0));
            GETREF(w->by_int, PyTuple_GET_ITEM(extra, 1));
            GETREF(w->by_key, PyTuple_GET_ITEM(extra, 2));
            if (!PyDict_Check(w->by_str) || !PyDict_Check(w->by_int) || !PyDict_Check(w->by_key)) goto bad;
            w->table = (Table *)PyTuple_GET_ITEM(extra, 3);
            Py_INCREF(w->table);
            if (w->table->esc != esc || w->table->total != total) goto bad;
            w->ent = w->table->ent;
            w->slot16 = w->table->slot16;
            w->k = w->table->k;
            if (cat_guide(w) < 0) goto fail;
            w->sidx = str_index_new(w->by_str, w->table);
            if (w->sidx == NULL && PyErr_Occurred()) goto fail;
            w->iidx = int_index_new(w->by_int, w->table);
            if (w->iidx == NULL && PyErr_Occurred()) goto fail;
            if (const_entries(w) < 0) goto fail;
            SETFLAG(w->mutable_, PyTuple_GET_ITEM(extra, 4));
            SETFLAG(w->leaves, PyTuple_GET_ITEM(extra, 5));
            break;
        case K_RANGE:
            if (ne != 2) goto bad;
            w->lo = PyLong_AsLongLong(PyTuple_GET_ITEM(extra, 0));
            if (w->lo == -1 && PyErr_Occurred()) goto fail;
            if (u64_arg(PyTuple_GET_ITEM(extra, 1), &w->span, "span") < 0) goto fail;
            if (w->span == 0) goto bad;
            break;
        case K_MAG:
            if (w->a < 0) goto bad;
            break;
        case K_DEC:
            if (ne != 1 || w->a < 0) goto bad;
            w->scale = (int)PyLong_AsLong(PyTuple_GET_ITEM(extra, 0));
            if (w->scale < 0 || w->scale > 6) goto bad;
            w->pow10 = 1.0;
            for (int k = 0; k < w->scale; k++) w->pow10 *= 10.0;
            w->pow10_obj = PyLong_FromLong((long)w->pow10);
            if (w->pow10_obj == NULL) goto fail;
            break;
        case K_TEMPLATE:
            if (ne != 2 || w->a < 0 || !PyUnicode_Check(PyTuple_GET_ITEM(extra, 0))) goto bad;
            GETREF(w->prefix, PyTuple_GET_ITEM(extra, 0));
            w->width = PyLong_AsSsize_t(PyTuple_GET_ITEM(extra, 1));
            if (w->width < 0 || w->width > 30) goto bad;
            break;
        case K_SHAPE: {
            if (ne != 2 || !PyTuple_Check(PyTuple_GET_ITEM(extra, 0)) || !PyUnicode_Check(PyTuple_GET_ITEM(extra, 1)))
                goto bad;
            GETREF(w->literals, PyTuple_GET_ITEM(extra, 0));
            Py_ssize_t nk;
            const char *ks = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(extra, 1), &nk);
            if (ks == NULL) goto fail;
            if (nk < 1 || nk > 32 || nk != w->nkids || PyTuple_GET_SIZE(w->literals) != nk + 1) goto bad;
            for (Py_ssize_t j = 0; j <= nk; j++)
                if (!PyUnicode_Check(PyTuple_GET_ITEM(w->literals, j))) goto bad;
            for (Py_ssize_t j = 0; j < nk; j++) {
                if (ks[j] != 'a' && ks[j] != '9') goto bad;
                w->kinds[j] = ks[j];
            }
            break;
        }
        case K_WORDS:
            if (ne != 1 || w->a < 0 || w->nkids < 1) goto bad;
            w->tokens = PyObject_IsTrue(PyTuple_GET_ITEM(extra, 0));
            for (Py_ssize_t j = 0; j < w->nkids; j++)
                if (w->kids[j] <= i && p->nodes[w->kids[j]].kind != K_CAT) goto bad;
            break;
        case K_OBJECT:  /* (keys, which children are rules, chained) */
            if (ne != 3 || !PyTuple_CheckExact(PyTuple_GET_ITEM(extra, 0)) || !PyTuple_Check(PyTuple_GET_ITEM(extra, 1)))
                goto bad;
            SETFLAG(w->chained, PyTuple_GET_ITEM(extra, 2));
            GETREF(w->keys, PyTuple_GET_ITEM(extra, 0));
            if (PyTuple_GET_SIZE(w->keys) != w->nkids || PyTuple_GET_SIZE(PyTuple_GET_ITEM(extra, 1)) != w->nkids) goto bad;
            for (Py_ssize_t j = 0; j < w->nkids; j++)
                if (!PyUnicode_CheckExact(PyTuple_GET_ITEM(w->keys, j))) goto bad;
            w->rule = PyMem_Calloc((size_t)(w->nkids ? w->nkids : 1), 1);
            if (w->rule == NULL) { PyErr_NoMemory(); goto fail; }
            for (Py_ssize_t j = 0; j < w->nkids; j++)
                w->rule[j] = (char)PyObject_IsTrue(PyTuple_GET_ITEM(PyTuple_GET_ITEM(extra, 1), j));
            break;
        case K_ARRAY:
            if (w->a < 0 || w->b < 0) goto bad;
            break;
        case K_GIVEN:
        case K_PREFIXED: {
            /* (by_str, by_int, by_key, predictions, plain flags or None, source, leaves); a = rest */
            if (ne != 7 || !PyTuple_Check(PyTuple_GET_ITEM(extra, 3)) || w->other < 0) goto bad;
            if (kind == K_PREFIXED && w->a < 0) goto bad;
            GETREF(w->by_str, PyTuple_GET_ITEM(extra, 0));
            GETREF(w->by_int, PyTuple_GET_ITEM(extra, 1));
            GETREF(w->by_key, PyTuple_GET_ITEM(extra, 2));
            if (!PyDict_Check(w->by_str) || !PyDict_Check(w->by_int) || !PyDict_Check(w->by_key)) goto bad;
            w->sidx = str_index_new(w->by_str, NULL);
            if (w->sidx == NULL && PyErr_Occurred()) goto fail;
            w->iidx = int_index_new(w->by_int, NULL);
            if (w->iidx == NULL && PyErr_Occurred()) goto fail;
            if (const_entries(w) < 0) goto fail;
            GETREF(w->preds, PyTuple_GET_ITEM(extra, 3));
            Py_ssize_t np = PyTuple_GET_SIZE(w->preds);
            w->plain = PyMem_Calloc((size_t)(np ? np : 1), 1);
            if (w->plain == NULL) { PyErr_NoMemory(); goto fail; }
            for (Py_ssize_t j = 0; j < np; j++) {
                PyObject *q = PyTuple_GET_ITEM(w->preds, j);
                if (kind == K_PREFIXED && !PyUnicode_CheckExact(q)) goto bad;
                w->plain[j] = PyUnicode_CheckExact(q) || PyLong_CheckExact(q) || PyBool_Check(q) || q == Py_None ||
                              (PyFloat_CheckExact(q) && PyFloat_AS_DOUBLE(q) == PyFloat_AS_DOUBLE(q) &&
                               PyFloat_AS_DOUBLE(q) != 0.0);
            }
            w->source = PyLong_AsSsize_t(PyTuple_GET_ITEM(extra, 5));
            if (w->source < 0) goto bad;
            SETFLAG(w->leaves, PyTuple_GET_ITEM(extra, 6));
            break;
        }
        case K_AFFIX:  /* (prefix, suffix, quoted, numeric, source, leaves) */
            if (ne != 6 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(extra, 0)) ||
                !PyUnicode_CheckExact(PyTuple_GET_ITEM(extra, 1)) || w->other < 0)
                goto bad;
            GETREF(w->prefix, PyTuple_GET_ITEM(extra, 0));
            GETREF(w->suffix, PyTuple_GET_ITEM(extra, 1));
            w->quoted = PyObject_IsTrue(PyTuple_GET_ITEM(extra, 2));
            w->numeric = PyObject_IsTrue(PyTuple_GET_ITEM(extra, 3));
            w->source = PyLong_AsSsize_t(PyTuple_GET_ITEM(extra, 4));
            if (w->source < 0) goto bad;
            SETFLAG(w->leaves, PyTuple_GET_ITEM(extra, 5));
            break;
        case K_SUM:  /* (a, b, scale, source, leaves) */
            if (ne != 5 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(extra, 0)) ||
                !PyUnicode_CheckExact(PyTuple_GET_ITEM(extra, 1)) || w->other < 0)
                goto bad;
            GETREF(w->prefix, PyTuple_GET_ITEM(extra, 0));
            GETREF(w->suffix, PyTuple_GET_ITEM(extra, 1));
            w->scale = (int)PyLong_AsLong(PyTuple_GET_ITEM(extra, 2));
            if (w->scale < 0 || w->scale > 17) goto bad;
            w->source = PyLong_AsSsize_t(PyTuple_GET_ITEM(extra, 3));
            if (w->source < 0) goto bad;
            SETFLAG(w->leaves, PyTuple_GET_ITEM(extra, 4));
            break;
        case K_MAP:
            if (w->a < 0 || w->b < 0 || w->c < 0) goto bad;
            break;
        case K_CHARS:
            w->chars = chars_new(extra);
            if (w->chars == NULL) goto fail;
            break;
        default:
            break;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {  /* words' vocabularies are categoricals */
        if (p->nodes[i].kind == K_WORDS)
            for (Py_ssize_t j = 0; j < p->nodes[i].nkids; j++)
                if (p->nodes[p->nodes[i].kids[j]].kind != K_CAT) goto bad;
        /* a chained object's other is an object, later in the program (so a chain ends) */
        if (p->nodes[i].chained && (p->nodes[i].other <= i || p->nodes[p->nodes[i].other].kind != K_OBJECT)) goto bad;
    }
    return (PyObject *)p;
bad:
    PyErr_SetString(PyExc_ValueError, "a malformed program node");
fail:
    Py_DECREF(p);
    return NULL;
}

/* -- encoding -- */

/* Each returns 0 when coded, -1 on an error, and on the common path (c) 1 when the value leaves it. */
static int wenc_node(Program *p, Py_ssize_t i, PyObject *v, WEnc *e, int c);

/* A Python method coding on e; its Off (the value leaves the common path) is 1. */
static int wenc_call(PyObject *r) {
    if (r != NULL) { Py_DECREF(r); return 0; }
    if (H_Off && PyErr_ExceptionMatches(H_Off)) { PyErr_Clear(); return 1; }
    return -1;
}

static int wenc_python(WNode *w, PyObject *v, WEnc *e, int c) {
    return wenc_call(PyObject_CallMethodObjArgs(w->py, c ? S_encode_common : S_encode, v, (PyObject *)e, NULL));
}

static int wenc_len(WEnc *e, limb n) {  /* _coder.code_length */
    int width = n ? 64 - __builtin_clzll(n) : 0;
    if (wput(e, (limb)width, 1, 64) < 0) return -1;
    if (width > 1) return wput(e, n - ((limb)1 << (width - 1)), 1, (limb)1 << (width - 1));
    return 0;
}

/* A string's JSON text as the json serialization writes it (orjson's: UTF-8, with \" \\ \b \f
 * \n \r \t and \u00XX for the other control characters), straight to the side stream; 1 when
 * the string has no UTF-8 (lone surrogates), which the Python serializer then writes. */
static int wenc_raw_str(WEnc *e, PyObject *v) {
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(v, &n);
    if (u == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
        PyErr_Clear();
        return 1;
    }
    Py_ssize_t size = n + 2;
    for (Py_ssize_t j = 0; j < n; j++) {
        unsigned char ch = (unsigned char)u[j];
        if (ch == '"' || ch == '\\' || ch == '\b' || ch == '\f' || ch == '\n' || ch == '\r' || ch == '\t') size += 1;
        else if (ch < 0x20) size += 5;
    }
    if (wenc_len(e, (limb)size) < 0) return -1;
    if (e->side_n + size > e->side_cap) {
        Py_ssize_t cap = 2 * (e->side_n + size) + 64;
        char *b = PyMem_Realloc(e->side, (size_t)cap);
        if (b == NULL) { PyErr_NoMemory(); return -1; }
        e->side = b;
        e->side_cap = cap;
    }
    char *o = e->side + e->side_n;
    static const char hex[] = "0123456789abcdef";
    *o++ = '"';
    for (Py_ssize_t j = 0; j < n; j++) {
        unsigned char ch = (unsigned char)u[j];
        char esc = 0;
        switch (ch) {
        case '"': esc = '"'; break;
        case '\\': esc = '\\'; break;
        case '\b': esc = 'b'; break;
        case '\f': esc = 'f'; break;
        case '\n': esc = 'n'; break;
        case '\r': esc = 'r'; break;
        case '\t': esc = 't'; break;
        default: break;
        }
        if (esc) {
            *o++ = '\\';
            *o++ = esc;
        } else if (ch < 0x20) {
            memcpy(o, "\\u00", 4);
            o[4] = hex[ch >> 4];
            o[5] = hex[ch & 15];
            o += 6;
        } else {
            *o++ = (char)ch;
        }
    }
    *o++ = '"';
    e->side_n += size;
    return 0;
}

static int wenc_raw(WEnc *e, PyObject *v) {
    if (PyUnicode_CheckExact(v)) {
        int rc = wenc_raw_str(e, v);
        if (rc <= 0) return rc;
    }
    /* 64-bit integers, true, false and null: their JSON text here, as dumps writes it */
    char text[24];
    int n = -1;
    if (PyLong_CheckExact(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (!overflow) n = snprintf(text, sizeof text, "%lld", x);
    } else if (v == Py_True || v == Py_False || v == Py_None) {
        n = (int)strlen(strcpy(text, v == Py_True ? "true" : v == Py_False ? "false" : "null"));
    }
    if (n > 0) {
        int rc = wenc_len(e, (limb)n);
        return rc == 0 ? wbytes(e, text, n) : rc;
    }
    PyObject *data = PyObject_CallOneArg(H_dumps, v);
    if (data == NULL) return -1;
    if (!PyBytes_Check(data)) { Py_DECREF(data); PyErr_SetString(PyExc_TypeError, "dumps"); return -1; }
    int rc = wenc_len(e, (limb)PyBytes_GET_SIZE(data));
    if (rc == 0) rc = wbytes(e, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
    Py_DECREF(data);
    return rc;
}

static int wenc_int(Program *p, Py_ssize_t i, long long n, WEnc *e, int c);

/* An int_range's value n in range, or a magnitude's n (any 64-bit int): coded from the C
 * integer, with no int object. */
static inline int range_put(WNode *w, long long n, WEnc *e, int c) {
    if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
    return wput(e, (limb)((__int128)n - w->lo), 1, w->span);
}

static inline int range_fits(const WNode *w, long long n) {
    __int128 d = (__int128)n - w->lo;
    return d >= 0 && (unsigned __int128)d < w->span;
}

static int mag_put(Program *p, WNode *w, long long n, WEnc *e, int c) {
    limb mag = n < 0 ? (limb)(-(n + 1)) + 1 : (limb)n;
    int bits = mag ? 64 - __builtin_clzll(mag) : 0;
    if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
    int rb = wenc_int(p, w->a, n < 0 ? -bits : bits, e, c);
    if (rb) return rb;
    if (bits >= 2) return wput(e, mag - ((limb)1 << (bits - 1)), 1, (limb)1 << (bits - 1));
    return 0;
}

/* Node i for the int n: ranges and magnitudes straight from n, other nodes from an int object. */
static int wenc_int(Program *p, Py_ssize_t i, long long n, WEnc *e, int c) {
    WNode *w = &p->nodes[i];
    if (w->kind == K_RANGE && range_fits(w, n)) return range_put(w, n, e, c);
    if (w->kind == K_MAG) return mag_put(p, w, n, e, c);
    PyObject *o = PyLong_FromLongLong(n);
    if (o == NULL) return -1;
    int rc = wenc_node(p, i, o, e, c);
    Py_DECREF(o);
    return rc;
}

/* A categorical's entry for a value: its index and, in a categorical (not a rule), its symbol. */
typedef struct {
    Py_ssize_t k;
    limb start, freq;
} Hit;

static inline int slot_hit(const StrSlot *slot, Hit *hit) {
    if (slot == NULL) return 0;
    hit->k = (Py_ssize_t)slot->entry1 - 1;
    hit->start = slot->start;
    hit->freq = slot->freq;
    return 1;
}

/* as_key(v): a float's, a dict's and a list's key made here as _nodes.as_key makes them
 * (("float", repr(v)), ("dict", dumps(v)), ("list", dumps(v))), any other value's by as_key
 * itself. */
static PyObject *as_key(PyObject *v) {
    PyObject *kind = PyFloat_CheckExact(v) ? S_float : PyDict_CheckExact(v) ? S_dict : PyList_CheckExact(v) ? S_list : NULL;
    if (kind == NULL) return PyObject_CallOneArg(H_as_key, v);
    if (kind == S_dict && PyDict_GET_SIZE(v) == 0) return Py_NewRef(K_empty_dict);
    if (kind == S_list && PyList_GET_SIZE(v) == 0) return Py_NewRef(K_empty_list);
    PyObject *text = kind == S_float ? PyObject_Repr(v) : PyObject_CallOneArg(H_dumps, v);
    if (text == NULL) return NULL;
    PyObject *k = PyTuple_Pack(2, kind, text);
    Py_DECREF(text);
    return k;
}

static int cat_find_keyed(WNode *w, PyObject *v, Hit *hit, KeyCache *kc);

/* The categorical entry of v (Categorical.starts.get(as_key(v))): 1 with *hit, 0 for none, -1
 * on an error. */
static int cat_find(WNode *w, PyObject *v, Hit *hit) { return cat_find_keyed(w, v, hit, NULL); }

/* cat_find, a dict's or list's key kept in kc (when not NULL) for the next lookup of the same
 * object. */
static int cat_find_keyed(WNode *w, PyObject *v, Hit *hit, KeyCache *kc) {
    PyObject *r;
    if (PyUnicode_CheckExact(v)) {
        if (w->sidx != NULL) return slot_hit(str_index_find(w->sidx, v, 0, PyUnicode_GET_LENGTH(v)), hit);
        r = PyDict_GetItemWithError(w->by_str, v);
    } else if (PyLong_CheckExact(v)) {
        if (w->iidx != NULL) {
            const IntSlot *slot = int_index_find(w->iidx, v);
            if (slot == NULL) return 0;
            hit->k = (Py_ssize_t)slot->entry1 - 1;
            hit->start = slot->start;
            hit->freq = slot->freq;
            return 1;
        }
        r = PyDict_GetItemWithError(w->by_int, v);
    } else if (v == Py_True || v == Py_False || v == Py_None) {
        hit->k = w->konst[v == Py_True ? 0 : v == Py_False ? 1 : 2];
        if (hit->k < 0) return 0;
        goto found;
    } else {
        if (PyDict_GET_SIZE(w->by_key) == 0) return 0;
        PyObject *k = kc != NULL ? keys_get(kc, v) : NULL;
        if (k == NULL) {
            k = as_key(v);
            if (k == NULL) return -1;
            if (kc != NULL && (PyDict_CheckExact(v) || PyList_CheckExact(v))) keys_put(kc, v, k);
        }
        r = PyDict_GetItemWithError(w->by_key, k);
        Py_DECREF(k);
    }
    if (r == NULL) return PyErr_Occurred() ? -1 : 0;
    hit->k = PyLong_AsSsize_t(r);
    if (hit->k == -1 && PyErr_Occurred()) return -1;
found:
    if (w->table != NULL) {
        hit->start = w->table->ent[hit->k].start;
        hit->freq = ent_freq(&w->table->ent[hit->k]);
    }
    return 1;
}

static inline int is_letter(Py_UCS4 c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }

/* Shape.pattern.fullmatch: the field bounds into at (2 per field), or 0 when it does not match. */
static int shape_match(WNode *w, PyObject *v, Py_ssize_t *at) {
    int kind = PyUnicode_KIND(v);
    const void *data = PyUnicode_DATA(v);
    Py_ssize_t len = PyUnicode_GET_LENGTH(v), pos = 0, m = w->nkids;
    for (Py_ssize_t j = 0; j <= m; j++) {
        PyObject *lit = PyTuple_GET_ITEM(w->literals, j);
        Py_ssize_t ln = PyUnicode_GET_LENGTH(lit);
        if (pos + ln > len) return 0;
        if (kind == PyUnicode_1BYTE_KIND && PyUnicode_KIND(lit) == PyUnicode_1BYTE_KIND) {
            if (memcmp((const Py_UCS1 *)data + pos, PyUnicode_1BYTE_DATA(lit), (size_t)ln) != 0) return 0;
        } else {
            for (Py_ssize_t q = 0; q < ln; q++)
                if (PyUnicode_READ(kind, data, pos + q) != PyUnicode_READ_CHAR(lit, q)) return 0;
        }
        pos += ln;
        if (j == m) break;
        Py_ssize_t s = pos;
        if (w->kinds[j] == 'a') {
            while (pos < len && is_letter(PyUnicode_READ(kind, data, pos))) pos++;
        } else {
            while (pos < len && is_digit(PyUnicode_READ(kind, data, pos))) pos++;
        }
        if (pos == s) return 0;
        at[2 * j] = s;
        at[2 * j + 1] = pos;
    }
    return pos == len;
}

/* Words.parts, for a text Words.fits accepts: the part bounds, 2 per part, in stack (room for
 * WORDS_ON_STACK parts) or a buffer the caller frees when it is not stack; the count in *np. */
#define WORDS_ON_STACK 16

static Py_ssize_t *word_parts(WNode *w, PyObject *v, Py_ssize_t *np, Py_ssize_t *stack) {
    int kind = PyUnicode_KIND(v);
    const void *data = PyUnicode_DATA(v);
    Py_ssize_t len = PyUnicode_GET_LENGTH(v), cap = WORDS_ON_STACK, n = 0, pos = 0;
    Py_ssize_t *at = stack;
    while (pos < len) {
        Py_ssize_t s = pos;
        Py_UCS4 c = PyUnicode_READ(kind, data, pos);
        if (w->tokens) {
            if (is_letter(c)) {
                while (pos < len && is_letter(PyUnicode_READ(kind, data, pos))) pos++;
            } else if (is_digit(c)) {
                while (pos < len && is_digit(PyUnicode_READ(kind, data, pos))) pos++;
            } else {
                pos++;
            }
        } else {
            while (pos < len && PyUnicode_READ(kind, data, pos) != ' ') pos++;
        }
        if (n == cap) {
            cap *= 2;
            Py_ssize_t *b = PyMem_Malloc((size_t)cap * 2 * sizeof(Py_ssize_t));
            if (b == NULL) {
                if (at != stack) PyMem_Free(at);
                PyErr_NoMemory();
                return NULL;
            }
            memcpy(b, at, (size_t)n * 2 * sizeof(Py_ssize_t));
            if (at != stack) PyMem_Free(at);
            at = b;
        }
        at[2 * n] = s;
        at[2 * n + 1] = pos;
        n++;
        if (!w->tokens) pos++;  /* the single space after a word */
    }
    *np = n;
    return at;
}

/* Object.fits's values: a new tuple of v's values when v is a dict with exactly the node's
 * keys in its order; NULL with no error when it is not; NULL with an error. */
static PyObject *object_values(WNode *w, PyObject *v) {
    Py_ssize_t n = w->nkids, pos = 0, j = 0;
    if (!PyDict_CheckExact(v) || PyDict_GET_SIZE(v) != n) return NULL;
    PyObject *vals = PyTuple_New(n), *k, *x;
    if (vals == NULL) return NULL;
    while (PyDict_Next(v, &pos, &k, &x)) {  /* the keys first: no Python code runs here */
        PyObject *key = PyTuple_GET_ITEM(w->keys, j);
        if (k != key) {
            int same;
            if (PyUnicode_CheckExact(k)) {  /* the model's keys are exact str: compare in place */
                Py_ssize_t n = PyUnicode_GET_LENGTH(k);
                same = n == PyUnicode_GET_LENGTH(key) && PyUnicode_KIND(k) == PyUnicode_KIND(key) &&
                       memcmp(PyUnicode_DATA(k), PyUnicode_DATA(key), (size_t)(n * PyUnicode_KIND(k))) == 0;
            } else {
                same = PyObject_RichCompareBool(k, key, Py_EQ);
            }
            if (same <= 0) { Py_DECREF(vals); return NULL; }
        }
        Py_INCREF(x);
        PyTuple_SET_ITEM(vals, j, x);
        j++;
    }
    if (j != n) { Py_DECREF(vals); return NULL; }
    return vals;
}

/* Words.fits: a non-empty str and, for words (not tokens), single spaces between them. */
static int words_fit(WNode *w, PyObject *v) {
    if (!PyUnicode_CheckExact(v)) return 0;
    Py_ssize_t len = PyUnicode_GET_LENGTH(v);
    if (len == 0) return 0;
    if (w->tokens) return 1;
    int kind = PyUnicode_KIND(v);
    const void *data = PyUnicode_DATA(v);
    if (PyUnicode_READ(kind, data, 0) == ' ' || PyUnicode_READ(kind, data, len - 1) == ' ') return 0;
    for (Py_ssize_t q = 1; q < len; q++)
        if (PyUnicode_READ(kind, data, q) == ' ' && PyUnicode_READ(kind, data, q - 1) == ' ') return 0;
    return 1;
}

/* A categorical's hit on one path (c: the common path's symbol, without escape mass where an
 * unseen value leaves it). */
static inline int cat_put(WNode *w, const Hit *h, WEnc *e, int c) {
    if (c && w->leaves) return w->table->k == 1 ? 0 : wput(e, h->start - w->esc, h->freq, w->total - w->esc);
    return wput(e, h->start, h->freq, w->total);
}

/* A categorical's entry for the text v[a:b] found from the span: 1 with *h, or 0 (not a
 * categorical with a string table, or no such entry: then a substring takes the node's usual
 * path). */
static inline int span_entry(WNode *w, PyObject *v, Py_ssize_t a, Py_ssize_t b, Hit *h) {
    return w->kind == K_CAT && w->sidx != NULL && slot_hit(str_index_find(w->sidx, v, a, b), h);
}

static int wenc_chars(const Chars *ch, const unsigned char *s, Py_ssize_t n, WEnc *e);

/* Node i for the text v[a:b]: a categorical's hit straight from the span, or its miss spelt out
 * from there, else a substring. */
static int wenc_sub(Program *p, Py_ssize_t i, PyObject *v, Py_ssize_t a, Py_ssize_t b, WEnc *e, int c) {
    WNode *w = &p->nodes[i];
    Hit h;
    if (span_entry(w, v, a, b, &h)) return cat_put(w, &h, e, c);
    if (w->kind == K_CAT && w->sidx != NULL && PyUnicode_IS_ASCII(v) && p->nodes[w->other].kind == K_CHARS) {
        /* a word the table lacks, spelt out: K_CAT's escape and K_CHARS's bytes, from the span
         * (an ASCII str's characters are its UTF-8) */
        const WNode *o = &p->nodes[w->other];
        if (c && w->leaves) return 1;
        if (wput(e, 0, w->esc, w->total) < 0) return -1;
        if (!c && wput(e, o->esc, o->total - o->esc, o->total) < 0) return -1;
        return wenc_chars(o->chars, PyUnicode_1BYTE_DATA(v) + a, b - a, e);
    }
    PyObject *s = PyUnicode_Substring(v, a, b);
    if (s == NULL) return -1;
    int rc = wenc_node(p, i, s, e, c);
    Py_DECREF(s);
    return rc;
}

/* A string's UTF-8 through a chars node's tables (the escape already coded): each byte, then the
 * end, in the table of the symbol before it or else the base table (spec §2, Characters). */
static int wenc_chars(const Chars *ch, const unsigned char *s, Py_ssize_t n, WEnc *e) {
    const CharTab *base = &ch->tab[CHAR_BASE];
    int before = CHAR_END;
    for (Py_ssize_t q = 0; q <= n; q++) {
        int x = q < n ? s[q] : CHAR_END;
        const CharTab *t = &ch->tab[before];
        before = x;
        if (t->n) {
            if (char_has(t, x)) {
                const uint64_t *w = ch->rows + char_row(t, x);
                if (wput(e, row_start(w[0]), row_freq(w), t->total) < 0) return -1;
                continue;
            }
            if (wput(e, 0, t->esc, t->total) < 0) return -1;
        }
        if (char_has(base, x)) {
            const uint64_t *w = ch->rows + char_row(base, x);
            if (wput(e, row_start(w[0]), row_freq(w), base->total) < 0) return -1;
        } else if (wput(e, 0, base->esc, base->total) < 0 || wput(e, (limb)x, 1, CHAR_BYTES) < 0) {
            return -1;
        }
    }
    return 0;
}

/* A str, int, float, bool or None (exactly those types): as_key's first part is its type's name. */
static inline int is_scalar(PyObject *v) {
    PyTypeObject *t = Py_TYPE(v);
    return t == &PyUnicode_Type || t == &PyLong_Type || t == &PyFloat_Type || v == Py_None || t == &PyBool_Type;
}

/* The sameness of the general rules (as_key(a) == as_key(b)): same type, equal, floats by repr
 * (the same bits, or both NaN), True, False and None by identity. */
static int same_value(PyObject *a, PyObject *b) {
    if (is_scalar(a) && is_scalar(b)) {
        if (Py_TYPE(a) != Py_TYPE(b)) return 0;
        if (PyUnicode_CheckExact(a)) return PyUnicode_Compare(a, b) == 0 ? 1 : (PyErr_Occurred() ? -1 : 0);
        if (PyLong_CheckExact(a)) return PyObject_RichCompareBool(a, b, Py_EQ);
        if (PyFloat_CheckExact(a)) {
            double x = PyFloat_AS_DOUBLE(a), y = PyFloat_AS_DOUBLE(b);
            return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y));
        }
        return a == b;
    }
    /* a scalar and a dict or list (exactly those): keys of different type names */
    if ((is_scalar(a) || is_scalar(b)) && (PyDict_CheckExact(a) || PyList_CheckExact(a) || PyDict_CheckExact(b) || PyList_CheckExact(b)))
        return 0;
    PyObject *ka = as_key(a);
    PyObject *kb = ka ? as_key(b) : NULL;
    int out = kb ? PyObject_RichCompareBool(ka, kb, Py_EQ) : -1;
    Py_XDECREF(ka);
    Py_XDECREF(kb);
    return out;
}

static PyObject *join_parts(PyObject *const *parts, Py_ssize_t n, int spaced);

/* The bytes urllib.parse.quote(safe="/") keeps: ASCII letters and digits, "_.-~" and "/". */
static inline int url_safe(unsigned char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
           ch == '-' || ch == '~' || ch == '/';
}

/* Affix.compute(src): prefix + the source (its decimal text where numeric, URL-quoted as
 * urllib.parse.quote(safe="/") where quoted) + suffix; NULL with no error where it has no
 * prediction. Sources C does not take (ints past 64 bits, texts without UTF-8) go to the Python
 * node's compute. */
static PyObject *affix_text(WNode *w, PyObject *src) {
    PyObject *mid = NULL, *out = NULL;
    if (w->numeric) {
        int overflow = 0;
        long long n = PyLong_CheckExact(src) ? PyLong_AsLongLongAndOverflow(src, &overflow) : 0;
        if (!PyLong_CheckExact(src)) return NULL;
        if (n == -1 && PyErr_Occurred()) return NULL;
        if (overflow) goto python;
        char buf[24];
        int len = snprintf(buf, sizeof buf, "%lld", n);
        mid = PyUnicode_FromStringAndSize(buf, len);
    } else {
        if (!PyUnicode_CheckExact(src)) return NULL;
        if (!w->quoted) {
            Py_INCREF(src);
            mid = src;
        } else {
            Py_ssize_t n;
            const char *u = PyUnicode_AsUTF8AndSize(src, &n);
            if (u == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return NULL;
                PyErr_Clear();
                goto python;
            }
            Py_ssize_t len = 0;
            for (Py_ssize_t q = 0; q < n; q++) {
                unsigned char ch = (unsigned char)u[q];
                len += url_safe(ch) ? 1 : 3;
            }
            if (len == n) {  /* nothing to quote: the source as it is */
                Py_INCREF(src);
                mid = src;
            } else {
                mid = PyUnicode_New(len, 127);
                if (mid == NULL) return NULL;
                Py_UCS1 *o = PyUnicode_1BYTE_DATA(mid);
                static const char hex[] = "0123456789ABCDEF";
                for (Py_ssize_t q = 0; q < n; q++) {
                    unsigned char ch = (unsigned char)u[q];
                    if (url_safe(ch)) {
                        *o++ = ch;
                    } else {
                        *o++ = '%';
                        *o++ = (Py_UCS1)hex[ch >> 4];
                        *o++ = (Py_UCS1)hex[ch & 15];
                    }
                }
            }
        }
    }
    if (mid == NULL) return NULL;
    PyObject *parts[3] = {w->prefix, mid, w->suffix};
    out = join_parts(parts, 3, 0);
    Py_DECREF(mid);
    return out;
python:
    out = PyObject_CallMethod(w->py, "compute", "O", src);
    if (out != NULL && !PyUnicode_CheckExact(out)) Py_CLEAR(out);  /* MISSING */
    return out;
}

/* round(x, scale) for 0 <= scale <= 6 and a finite x: the decimal of scale places nearest x's
 * exact binary value (ties to the even last digit), then the double nearest that decimal, as
 * round() makes them with its correctly rounded text. Worked out in integers where
 * |x| * 10^scale < 2^53 (0 elsewhere, for the text's way): |x| = m * 2^e exactly, so
 * |x| * 10^scale = m * 5^scale * 2^(e + scale), below 2^72; the quotient by a power of two and
 * its remainder round it, and the rounded n < 2^53 over 10^scale (both exact doubles) is one
 * correctly rounded division. */
static int round_places(double x, int scale, double *out) {
    static const double p10[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
    static const uint64_t p5[] = {1, 5, 25, 125, 625, 3125, 15625};
    if (scale < 0 || scale > 6 || !(fabs(x) < 9007199254740992.0 / p10[scale])) return 0;
    int e;
    uint64_t m = (uint64_t)ldexp(frexp(fabs(x), &e), 53);  /* |x| = m * 2^(e - 53) */
    unsigned __int128 v = (unsigned __int128)m * p5[scale];
    int k = 53 - e - scale;  /* |x| * 10^scale = v / 2^k */
    uint64_t n;
    if (k <= 0) {
        n = (uint64_t)(v << -k);  /* below 2^53 by the test above */
    } else if (k >= 127) {
        n = 0;  /* v < 2^72: below a quarter */
    } else {
        unsigned __int128 q = v >> k, rem = v - (q << k), half = (unsigned __int128)1 << (k - 1);
        n = (uint64_t)q + (rem > half || (rem == half && (q & 1)));
    }
    *out = copysign((double)n / p10[scale], x);
    return 1;
}

/* SumOf.compute(src): sum(item[a] * item[b]) over a list of dicts, added left to right from the
 * integer 0, a float total rounded to scale decimals as round() does (round_places, or the
 * correctly rounded decimal text read back); NULL with no error where it has no prediction.
 * What C does not take exactly (other types, ints past 64 bits, totals not finite) goes to the
 * Python node. */
static PyObject *sum_value(WNode *w, PyObject *src) {
    if (!PyList_CheckExact(src)) goto python;
    long long itotal = 0;
    double ftotal = 0.0;
    int isfloat = 0;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(src); j++) {
        PyObject *x = PyList_GET_ITEM(src, j);
        if (!PyDict_CheckExact(x)) goto python;
        Py_INCREF(x);  /* x, a and b held: a lookup may run Python code that changes them */
        PyObject *a = PyDict_GetItemWithError(x, w->prefix);
        if (a == NULL) { Py_DECREF(x); return NULL; }  /* an error, or a KeyError: no prediction */
        Py_INCREF(a);
        PyObject *b = PyDict_GetItemWithError(x, w->suffix);
        Py_XINCREF(b);
        Py_DECREF(x);
        int af = b && PyFloat_CheckExact(a), bf = b && PyFloat_CheckExact(b), exact = 0, overflow = 0;
        long long ai = 0, bi = 0;
        double ad = 0.0, bd = 0.0;
        if (b != NULL && (af || PyLong_CheckExact(a)) && (bf || PyLong_CheckExact(b))) {
            exact = 1;
            if (af) ad = PyFloat_AS_DOUBLE(a);
            else ai = PyLong_AsLongLongAndOverflow(a, &overflow);
            if (bf) bd = PyFloat_AS_DOUBLE(b);
            else if (!overflow) bi = PyLong_AsLongLongAndOverflow(b, &overflow);
        }
        Py_DECREF(a);
        Py_XDECREF(b);
        if (b == NULL) return NULL;  /* an error, or a KeyError: no prediction */
        if (!exact || overflow) goto python;
        if (af || bf) {  /* Python's int * float: the int as the nearest double */
            volatile double prod = (af ? ad : (double)ai) * (bf ? bd : (double)bi);
            ftotal = (isfloat ? ftotal : (double)itotal) + prod;  /* volatile: no fused multiply-add */
            isfloat = 1;
        } else {
            long long prod;
            if (__builtin_mul_overflow(ai, bi, &prod)) goto python;
            if (isfloat) {
                ftotal = ftotal + (double)prod;
            } else if (__builtin_add_overflow(itotal, prod, &itotal)) {
                goto python;
            }
        }
    }
    if (!isfloat) return PyLong_FromLongLong(itotal);
    if (!isfinite(ftotal)) goto python;
    double rounded;
    if (round_places(ftotal, w->scale, &rounded)) return PyFloat_FromDouble(rounded);
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", w->scale, ftotal);
    return PyFloat_FromDouble(strtod(buf, NULL));
python:
    {
        PyObject *out = PyObject_CallMethod(w->py, "compute", "O", src);
        if (out != NULL && !PyLong_CheckExact(out) && !PyFloat_CheckExact(out)) Py_CLEAR(out);  /* MISSING */
        return out;
    }
}

/* The prediction of a rule computed from its source (affix, sum): a new reference, or NULL with
 * no error where it has none. */
#define COMPUTED(kind) ((kind) == K_AFFIX || (kind) == K_SUM)
static PyObject *computed(WNode *w, PyObject *src) {
    return w->kind == K_SUM ? sum_value(w, src) : affix_text(w, src);
}

/* as_key(p) == as_key(v) for an int or float prediction p (the general rules' sameness), or, on
 * the common path, type(v) is type(p) and v == p != 0. */
static int sum_holds(PyObject *p, PyObject *v, int c) {
    if (Py_TYPE(v) != Py_TYPE(p)) return 0;
    if (PyFloat_CheckExact(p)) {
        double a = PyFloat_AS_DOUBLE(p), b = PyFloat_AS_DOUBLE(v);
        if (c) return a == b && a != 0.0;
        return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));  /* the same repr */
    }
    int eq = PyObject_RichCompareBool(p, v, Py_EQ);
    if (eq <= 0 || !c) return eq;
    return PyObject_IsTrue(p);
}

/* A given or prefixed rule (spec §3) for value v whose source field holds src. */
static int wenc_rule(Program *p, Py_ssize_t i, PyObject *v, PyObject *src, WEnc *e, int c) {
    WNode *w = &p->nodes[i];
    int holds;
    Py_ssize_t plen = 0;
    if (COMPUTED(w->kind)) {  /* always a prediction (or none that holds) */
        PyObject *t = computed(w, src);
        if (t == NULL && PyErr_Occurred()) return -1;
        if (t == NULL) holds = 0;
        else if (w->kind == K_SUM) holds = sum_holds(t, v, c);
        else holds = PyUnicode_CheckExact(v) && PyUnicode_Compare(v, t) == 0;  /* v must be that text */
        Py_XDECREF(t);
        if (holds < 0 || PyErr_Occurred()) return -1;
        goto code;
    }
    Hit h;
    int found = cat_find_keyed(w, src, &h, &e->keys);
    if (found < 0) return -1;
    if (!found) return wenc_node(p, w->other, v, e, c);  /* no prediction: no symbol */
    Py_ssize_t k = h.k;
    PyObject *q = PyTuple_GET_ITEM(w->preds, k);
    if (w->kind == K_PREFIXED) {
        holds = PyUnicode_CheckExact(v) && (int)PyUnicode_Tailmatch(v, q, 0, PY_SSIZE_T_MAX, -1);
        if (holds < 0) return -1;
        plen = PyUnicode_GET_LENGTH(q);
    } else if (c) {  /* the common path's test: == on values it tells apart, of one type */
        holds = w->plain[k] && Py_TYPE(v) == Py_TYPE(q) ? PyObject_RichCompareBool(v, q, Py_EQ) : 0;
        if (holds < 0) return -1;
    } else {
        holds = same_value(q, v);
        if (holds < 0) return -1;
    }
code:
    if (c && w->leaves) {
        if (!holds) return 1;
    } else if (holds) {
        if (wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
    } else {
        if (wput(e, 0, w->esc, w->total) < 0) return -1;
        return wenc_node(p, w->other, v, e, c);
    }
    if (w->kind == K_PREFIXED) return wenc_sub(p, w->a, v, plen, PyUnicode_GET_LENGTH(v), e, c);
    return 0;
}

static int wenc_node(Program *p, Py_ssize_t i, PyObject *v, WEnc *e, int c) {
    WNode *w = &p->nodes[i];
    int fits = 0;
    switch (w->kind) {
    case K_PY:
    case K_GIVEN:     /* a rule outside an object (which the reader refuses): its Python node */
    case K_PREFIXED:
    case K_AFFIX:
    case K_SUM:
        return wenc_python(w, v, e, c);
    case K_RAW:
        return c ? 1 : wenc_raw(e, v);
    case K_CAT: {
        Hit h;
        int found = cat_find(w, v, &h);
        if (found < 0) return -1;
        if (found) return cat_put(w, &h, e, c);  /* given a hit, no escape mass; nothing for one value */
        if (c && w->leaves) return 1;
        if (wput(e, 0, w->esc, w->total) < 0) return -1;
        return wenc_node(p, w->other, v, e, c);
    }
    case K_RANGE: {
        long long n = 0;
        if (PyLong_CheckExact(v)) {
            int overflow;
            n = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (n == -1 && PyErr_Occurred()) return -1;
            if (overflow) return wenc_python(w, v, e, c);
            fits = range_fits(w, n);
        }
        if (!fits) break;
        return range_put(w, n, e, c);
    }
    case K_MAG: {
        if (!PyLong_CheckExact(v)) break;
        int overflow;
        long long n = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (n == -1 && PyErr_Occurred()) return -1;
        if (overflow) return wenc_python(w, v, e, c);  /* 2^63 <= |v|: the Python node */
        return mag_put(p, w, n, e, c);
    }
    case K_DEC: {
        if (!PyFloat_CheckExact(v)) break;
        double f = PyFloat_AS_DOUBLE(v);
        if (!isfinite(f)) break;
        double x = f * w->pow10;
        if (!(fabs(x) < 9007199254740992.0)) return wenc_python(w, v, e, c);  /* beyond 2^53: exact ints in Python */
        double r = nearbyint(x);  /* round half to even, as Python's round */
        if (r / w->pow10 != f || (r == 0.0 && signbit(f))) break;
        if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
        return wenc_int(p, w->a, (long long)r, e, c);
    }
    case K_TEMPLATE: {
        if (!PyUnicode_CheckExact(v)) break;
        Py_ssize_t len = PyUnicode_GET_LENGTH(v), pl = PyUnicode_GET_LENGTH(w->prefix), nd = len - pl;
        if (nd < 1) break;
        int t = (int)PyUnicode_Tailmatch(v, w->prefix, 0, pl, -1);
        if (t < 0) return -1;
        if (!t) break;
        int kind = PyUnicode_KIND(v);
        const void *data = PyUnicode_DATA(v);
        fits = 1;
        for (Py_ssize_t q = pl; q < len && fits; q++) fits = is_digit(PyUnicode_READ(kind, data, q));
        if (fits) {
            if (w->width) fits = nd == w->width;
            else fits = nd <= 30 && (nd == 1 || PyUnicode_READ(kind, data, pl) != '0');
        }
        if (!fits) break;
        if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
        if (nd <= 18) {  /* below 10^18: a C integer */
            long long n = 0;
            for (Py_ssize_t q = pl; q < len; q++) n = 10 * n + (long long)(PyUnicode_READ(kind, data, q) - '0');
            return wenc_int(p, w->a, n, e, c);
        }
        PyObject *digits = PyUnicode_Substring(v, pl, len);
        PyObject *n = digits ? PyLong_FromUnicodeObject(digits, 10) : NULL;
        Py_XDECREF(digits);
        if (n == NULL) return -1;
        int rc = wenc_node(p, w->a, n, e, c);
        Py_DECREF(n);
        return rc;
    }
    case K_SHAPE: {
        Py_ssize_t at[64];
        if (!PyUnicode_CheckExact(v) || !shape_match(w, v, at)) break;
        if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
        for (Py_ssize_t j = 0; j < w->nkids; j++) {
            int rc = wenc_sub(p, w->kids[j], v, at[2 * j], at[2 * j + 1], e, c);
            if (rc) return rc;
        }
        return 0;
    }
    case K_WORDS: {
        if (!words_fit(w, v)) break;
        Py_ssize_t np;
        Py_ssize_t stack[2 * WORDS_ON_STACK];
        Py_ssize_t *at = word_parts(w, v, &np, stack);
        if (at == NULL) return -1;
        int rc = c ? 0 : wput(e, w->esc, w->total - w->esc, w->total);
        if (rc == 0) rc = wenc_int(p, w->a, np, e, c);
        if (c) e->items += np;
        for (Py_ssize_t j = 0; j < np && rc == 0; j++)
            rc = wenc_sub(p, w->kids[j < w->nkids ? j : w->nkids - 1], v, at[2 * j], at[2 * j + 1], e, c);
        if (at != stack) PyMem_Free(at);
        return rc;
    }
    case K_OBJECT: {
        Py_ssize_t n = w->nkids;
        PyObject *vals = object_values(w, v);
        if (vals == NULL) {
            if (PyErr_Occurred()) return -1;
            break;
        }
        int rc = c && !w->chained ? 0 : wput(e, w->esc, w->total - w->esc, w->total);
        for (Py_ssize_t j = 0; j < n && rc == 0; j++) {
            PyObject *item = PyTuple_GET_ITEM(vals, j);
            WNode *kid = &p->nodes[w->kids[j]];
            if (C_RULE(kid->kind) && kid->source < j) {
                rc = wenc_rule(p, w->kids[j], item, PyTuple_GET_ITEM(vals, kid->source), e, c);
            } else if (w->rule[j]) {
                PyObject *ctx = PyTuple_GetSlice(vals, 0, j), *lst = ctx ? PySequence_List(ctx) : NULL;
                Py_XDECREF(ctx);
                PyObject *name = c ? S_encode_common_in : S_encode_in;
                rc = lst ? wenc_call(PyObject_CallMethodObjArgs(p->nodes[w->kids[j]].py, name, item, (PyObject *)e, lst, NULL)) : -1;
                Py_XDECREF(lst);
            } else {
                rc = wenc_node(p, w->kids[j], item, e, c);
            }
        }
        Py_DECREF(vals);
        return rc;
    }
    case K_ARRAY: {
        if (!PyList_CheckExact(v)) break;
        if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
        int rl = wenc_int(p, w->a, PyList_GET_SIZE(v), e, c);
        if (rl) return rl;
        if (c) e->items += PyList_GET_SIZE(v);
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(v); j++) {
            PyObject *x = PyList_GET_ITEM(v, j);
            Py_INCREF(x);
            int rc = wenc_node(p, w->b, x, e, c);
            Py_DECREF(x);
            if (rc) return rc;
        }
        return 0;
    }
    case K_CHARS: {
        if (!PyUnicode_CheckExact(v)) break;
        Py_ssize_t n;
        const char *u = PyUnicode_AsUTF8AndSize(v, &n);
        if (u == NULL) {  /* no UTF-8 (lone surrogates): JSON text */
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return -1;
            PyErr_Clear();
            break;
        }
        if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
        return wenc_chars(w->chars, (const unsigned char *)u, n, e);
    }
    case K_MAP: {
        if (c) return 1;  /* never on the common path */
        if (!PyDict_CheckExact(v)) break;
        if (!c && wput(e, w->esc, w->total - w->esc, w->total) < 0) return -1;
        if (wenc_int(p, w->a, PyDict_GET_SIZE(v), e, 0) < 0) return -1;
        PyObject *items = PyDict_Items(v);
        if (items == NULL) return -1;
        int rc = 0;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(items) && rc == 0; j++) {
            PyObject *kv = PyList_GET_ITEM(items, j);
            rc = wenc_node(p, w->b, PyTuple_GET_ITEM(kv, 0), e, 0);
            if (rc == 0) rc = wenc_node(p, w->c, PyTuple_GET_ITEM(kv, 1), e, 0);
        }
        Py_DECREF(items);
        return rc;
    }
    }
    /* not of the kind modelled: off the common path (but through a chained object's other);
     * else the escape, then ``other`` or the JSON text */
    if (c && !w->chained) return 1;
    if (wput(e, 0, w->esc, w->total) < 0) return -1;
    return w->other >= 0 ? wenc_node(p, w->other, v, e, c) : wenc_raw(e, v);
}

/* Format 6: one walk for both paths. The common path's symbols go to cm while the value stays on
 * it (*alive), the general rules' to g, so a value that leaves the common path late (most of
 * a faker record's fields coded, then text the model does not know) is not walked twice.
 * Objects, arrays, categoricals, shapes and words share their work (the key check, the
 * lookups, the substrings); other nodes are walked once per path. */
static int wenc_both(Program *p, Py_ssize_t i, PyObject *v, WEnc *g, WEnc *cm, int *alive);

static int both_separately(Program *p, Py_ssize_t i, PyObject *v, WEnc *g, WEnc *cm, int *alive) {
    int rc = wenc_node(p, i, v, cm, 1);
    if (rc < 0) return -1;
    if (rc == 1) *alive = 0;
    return wenc_node(p, i, v, g, 0);
}

/* A categorical's hit on both paths. */
static inline int both_cat_put(WNode *w, const Hit *h, WEnc *g, WEnc *cm) {
    if (wput(g, h->start, h->freq, w->total) < 0) return -1;
    return cat_put(w, h, cm, 1);
}

static int both_sub(Program *p, Py_ssize_t i, PyObject *v, Py_ssize_t a, Py_ssize_t b, WEnc *g, WEnc *cm, int *alive) {
    if (!*alive) return wenc_sub(p, i, v, a, b, g, 0);
    WNode *w = &p->nodes[i];
    Hit h;
    if (span_entry(w, v, a, b, &h)) return both_cat_put(w, &h, g, cm);
    PyObject *s = PyUnicode_Substring(v, a, b);
    if (s == NULL) return -1;
    int rc = wenc_both(p, i, s, g, cm, alive);
    Py_DECREF(s);
    return rc;
}

static int both_int(Program *p, Py_ssize_t i, long long n, WEnc *g, WEnc *cm, int *alive) {
    PyObject *o = PyLong_FromLongLong(n);
    if (o == NULL) return -1;
    int rc = wenc_both(p, i, o, g, cm, alive);
    Py_DECREF(o);
    return rc;
}

/* The hit symbol of an escaping node: the general rules' only. */
static inline int both_hit(WNode *w, WEnc *g) { return wput(g, w->esc, w->total - w->esc, w->total); }

static int wenc_both(Program *p, Py_ssize_t i, PyObject *v, WEnc *g, WEnc *cm, int *alive) {
    if (!*alive) return wenc_node(p, i, v, g, 0);
    WNode *w = &p->nodes[i];
    switch (w->kind) {
    case K_CAT: {
        Hit h;
        int found = cat_find(w, v, &h);
        if (found < 0) return -1;
        if (found) return both_cat_put(w, &h, g, cm);
        if (wput(g, 0, w->esc, w->total) < 0) return -1;
        if (w->leaves) {
            *alive = 0;
            return wenc_node(p, w->other, v, g, 0);
        }
        if (wput(cm, 0, w->esc, w->total) < 0) return -1;
        return wenc_both(p, w->other, v, g, cm, alive);
    }
    case K_SHAPE: {
        Py_ssize_t at[64];
        if (!PyUnicode_CheckExact(v) || !shape_match(w, v, at)) break;
        if (both_hit(w, g) < 0) return -1;
        for (Py_ssize_t j = 0; j < w->nkids; j++)
            if (both_sub(p, w->kids[j], v, at[2 * j], at[2 * j + 1], g, cm, alive) < 0) return -1;
        return 0;
    }
    case K_WORDS: {
        if (!words_fit(w, v)) break;
        Py_ssize_t np;
        Py_ssize_t stack[2 * WORDS_ON_STACK];
        Py_ssize_t *at = word_parts(w, v, &np, stack);
        if (at == NULL) return -1;
        int rc = both_hit(w, g);
        if (rc == 0) rc = both_int(p, w->a, np, g, cm, alive);
        cm->items += np;
        for (Py_ssize_t j = 0; j < np && rc == 0; j++)
            rc = both_sub(p, w->kids[j < w->nkids ? j : w->nkids - 1], v, at[2 * j], at[2 * j + 1], g, cm, alive);
        if (at != stack) PyMem_Free(at);
        return rc;
    }
    case K_ARRAY: {
        if (!PyList_CheckExact(v)) break;
        if (both_hit(w, g) < 0) return -1;
        if (both_int(p, w->a, PyList_GET_SIZE(v), g, cm, alive) < 0) return -1;
        cm->items += PyList_GET_SIZE(v);
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(v); j++) {
            PyObject *x = PyList_GET_ITEM(v, j);
            Py_INCREF(x);
            int rc = wenc_both(p, w->b, x, g, cm, alive);
            Py_DECREF(x);
            if (rc < 0) return -1;
        }
        return 0;
    }
    case K_OBJECT: {
        Py_ssize_t n = w->nkids;
        PyObject *vals = object_values(w, v);
        if (vals == NULL) {
            if (PyErr_Occurred()) return -1;
            break;
        }
        int rc = both_hit(w, g);
        if (rc == 0 && w->chained) rc = both_hit(w, cm);
        for (Py_ssize_t j = 0; j < n && rc >= 0; j++) {
            PyObject *item = PyTuple_GET_ITEM(vals, j);
            WNode *kid = &p->nodes[w->kids[j]];
            if (C_RULE(kid->kind) && kid->source < j) {
                PyObject *src = PyTuple_GET_ITEM(vals, kid->source);
                if (*alive) {
                    rc = wenc_rule(p, w->kids[j], item, src, cm, 1);
                    if (rc == 1) *alive = 0;
                }
                if (rc >= 0) rc = wenc_rule(p, w->kids[j], item, src, g, 0);
            } else if (w->rule[j]) {
                PyObject *ctx = PyTuple_GetSlice(vals, 0, j), *lst = ctx ? PySequence_List(ctx) : NULL;
                Py_XDECREF(ctx);
                if (lst == NULL) { rc = -1; break; }
                if (*alive) {
                    rc = wenc_call(PyObject_CallMethodObjArgs(kid->py, S_encode_common_in, item, (PyObject *)cm, lst, NULL));
                    if (rc == 1) *alive = 0;
                }
                if (rc >= 0) rc = wenc_call(PyObject_CallMethodObjArgs(kid->py, S_encode_in, item, (PyObject *)g, lst, NULL));
                Py_DECREF(lst);
            } else {
                rc = wenc_both(p, w->kids[j], item, g, cm, alive);
            }
        }
        Py_DECREF(vals);
        return rc < 0 ? -1 : 0;
    }
    default:
        return both_separately(p, i, v, g, cm, alive);
    }
    /* a shape, words, array or object the value does not fit: off the common path, but where a
     * chained object's other takes it */
    if (w->kind == K_OBJECT && w->chained) {
        if (wput(g, 0, w->esc, w->total) < 0 || wput(cm, 0, w->esc, w->total) < 0) return -1;
        return wenc_both(p, w->other, v, g, cm, alive);
    }
    *alive = 0;
    return wenc_node(p, i, v, g, 0);
}

/* program.encode_both(value, general, common): both paths in one walk (format 6); True when the
 * value is on the common path (its payload is then common's). */
static PyObject *program_encode_both(Program *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || Py_TYPE(args[1]) != &WEncType || Py_TYPE(args[2]) != &WEncType || p->n == 0) {
        PyErr_SetString(PyExc_TypeError, "encode_both(value, general: WalkEncoder, common: WalkEncoder)");
        return NULL;
    }
    int alive = 1;
    if (Py_EnterRecursiveCall(" in the learned-model walk")) return NULL;
    int rc = wenc_both(p, 0, args[0], (WEnc *)args[1], (WEnc *)args[2], &alive);
    Py_LeaveRecursiveCall();
    if (rc < 0) return NULL;
    return PyBool_FromLong(alive);
}

/* program.encode(value, encoder, common=False): code value through node 0 by the general
 * rules, or by the common path's (format 6); False when the value leaves the common path. */
static PyObject *program_encode(Program *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3 || Py_TYPE(args[1]) != &WEncType || p->n == 0) {
        PyErr_SetString(PyExc_TypeError, "encode(value, encoder: WalkEncoder, common=False)");
        return NULL;
    }
    int c = nargs == 3 ? PyObject_IsTrue(args[2]) : 0;
    if (c < 0) return NULL;
    if (Py_EnterRecursiveCall(" in the learned-model walk")) return NULL;
    int rc = wenc_node(p, 0, args[0], (WEnc *)args[1], c);
    Py_LeaveRecursiveCall();
    if (rc < 0) return NULL;
    return PyBool_FromLong(rc == 0);
}

/* -- decoding -- */

static PyObject *wdec_node(Program *p, Py_ssize_t i, WDec *d, int c);

/* The text of n str parts, with a space between them where spaced: one allocation, the parts'
 * characters copied in (PyUnicode_Join built a list and checked each item as a sequence). The
 * parts are canonical str, so the widest of them is the text's width. */
static PyObject *join_parts(PyObject *const *parts, Py_ssize_t n, int spaced) {
    Py_ssize_t total = spaced && n ? n - 1 : 0;
    Py_UCS4 maxc = 127;
    for (Py_ssize_t j = 0; j < n; j++) {
        total += PyUnicode_GET_LENGTH(parts[j]);
        Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(parts[j]);
        if (m > maxc) maxc = m;
    }
    PyObject *out = PyUnicode_New(total, maxc);
    if (out == NULL) return NULL;
    int kind = PyUnicode_KIND(out);
    char *data = PyUnicode_DATA(out);
    Py_ssize_t pos = 0;
    for (Py_ssize_t j = 0; j < n; j++) {
        if (spaced && j) PyUnicode_WRITE(kind, data, pos++, ' ');
        PyObject *x = parts[j];
        Py_ssize_t len = PyUnicode_GET_LENGTH(x);
        if (PyUnicode_KIND(x) == kind) {
            memcpy(data + pos * kind, PyUnicode_DATA(x), (size_t)(len * kind));
        } else if (PyUnicode_CopyCharacters(out, pos, x, 0, len) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        pos += len;
    }
    return out;
}

/* The value of the JSON texts most side-stream values are, read here as orjson reads them: a
 * string without escapes or control characters (UTF-8 checked by Python's strict decoder), an
 * integer of at most 18 digits without a leading zero, true, false, null. NULL with no error
 * for any other text, which orjson is left to read (and to reject). */
static PyObject *plain_json(const unsigned char *b, Py_ssize_t n) {
    if (n >= 2 && b[0] == '"' && b[n - 1] == '"') {
        unsigned char bad = 0;
        for (Py_ssize_t j = 1; j < n - 1; j++) bad |= (b[j] < 0x20) | (b[j] == '"') | (b[j] == '\\');
        if (bad) return NULL;
        PyObject *out = PyUnicode_DecodeUTF8((const char *)b + 1, n - 2, "strict");
        if (out == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) PyErr_Clear();
        return out;
    }
    Py_ssize_t j = n > 0 && b[0] == '-';
    if (n - j >= 1 && n - j <= 18 && (b[j] != '0' || n - j == 1)) {
        long long v = 0;
        for (Py_ssize_t q = j; q < n; q++) {
            if (b[q] < '0' || b[q] > '9') return NULL;
            v = v * 10 + (b[q] - '0');
        }
        return PyLong_FromLongLong(j ? -v : v);
    }
    if (n == 4 && memcmp(b, "true", 4) == 0) Py_RETURN_TRUE;
    if (n == 5 && memcmp(b, "false", 5) == 0) Py_RETURN_FALSE;
    if (n == 4 && memcmp(b, "null", 4) == 0) Py_RETURN_NONE;
    return NULL;
}

static PyObject *wdec_raw(WDec *d) {
    limb width, rest, n;
    if (wuni(d, 64, &width) < 0) return NULL;
    if (width > 1) {
        if (wuni(d, (limb)1 << (width - 1), &rest) < 0) return NULL;
        n = ((limb)1 << (width - 1)) + rest;
    } else {
        n = width;
    }
    if (n > (limb)PY_SSIZE_T_MAX) return derr("escaped bytes run past the side stream");
    /* below 2^20 bytes, as orjson's way below: _json.loads bounds longer texts' values */
    if (H_fastloads && n < ((limb)1 << 20) && n <= (limb)(PyBytes_GET_SIZE(d->buf) - d->pos)) {
        PyObject *out = plain_json((const unsigned char *)PyBytes_AS_STRING(d->buf) + d->pos, (Py_ssize_t)n);
        if (out != NULL) {
            d->pos += (Py_ssize_t)n;
            return out;
        }
        if (PyErr_Occurred()) return NULL;
    }
    PyObject *data = wtake_bytes(d, (Py_ssize_t)n);
    if (data == NULL) return NULL;
    /* orjson's parser straight away, but for exact texts (a leading space) and long ones, which
     * _json.loads bounds (spec/WIRE_FORMAT.md §2) */
    int fast = H_fastloads && n > 0 && n < ((Py_ssize_t)1 << 20) && PyBytes_AS_STRING(data)[0] != ' ';
    PyObject *out = PyObject_CallOneArg(fast ? H_fastloads : H_loads, data);
    Py_DECREF(data);
    return out;
}

/* A decoded count: an int in lo..hi, else DecodeError(msg). */
static int wdec_count(Program *p, Py_ssize_t i, WDec *d, int c, long long lo, long long hi, const char *msg, Py_ssize_t *out) {
    PyObject *o = wdec_node(p, i, d, c);
    if (o == NULL) return -1;
    int ok = PyLong_CheckExact(o);
    long long n = 0;
    if (ok) {
        int overflow;
        n = PyLong_AsLongLongAndOverflow(o, &overflow);
        ok = !overflow && n >= lo && n <= hi;
    }
    Py_DECREF(o);
    if (PyErr_Occurred()) return -1;
    if (!ok) { derr(msg); return -1; }
    *out = (Py_ssize_t)n;
    return 0;
}

/* A copy of a table's dict or list that the caller may change: new dicts and lists all the way
 * down, the scalars (str, int, float, bool, None: immutable) shared, which is what copy_value's
 * JSON round trip gives back. 0 where it meets anything else (a tuple, a subclass, as of an
 * OrderedDict learned in this process, a key that is not a str), which copy_value is then left
 * to copy; -1 on an error. */
static int copy_json(PyObject *v, PyObject **out) {
    if (PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) ||
        v == Py_None) {
        Py_INCREF(v);
        *out = v;
        return 1;
    }
    if (Py_EnterRecursiveCall(" copying a table's value")) return -1;
    int r = 0;
    PyObject *c = NULL;
    if (PyList_CheckExact(v)) {
        Py_ssize_t n = PyList_GET_SIZE(v);
        if ((c = PyList_New(n)) == NULL) goto fail;
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *x;
            if ((r = copy_json(PyList_GET_ITEM(v, j), &x)) <= 0) goto fail;
            PyList_SET_ITEM(c, j, x);
        }
    } else if (PyDict_CheckExact(v)) {
        if ((c = _PyDict_NewPresized(PyDict_GET_SIZE(v))) == NULL) goto fail;
        Py_ssize_t pos = 0;
        PyObject *k, *x, *y;
        while (PyDict_Next(v, &pos, &k, &x)) {
            if (!PyUnicode_CheckExact(k)) goto fail;
            if ((r = copy_json(x, &y)) <= 0) goto fail;
            r = PyDict_SetItem(c, k, y);
            Py_DECREF(y);
            if (r < 0) goto fail;
        }
    } else {
        goto fail;
    }
    Py_LeaveRecursiveCall();
    *out = c;
    return 1;
fail:
    Py_LeaveRecursiveCall();
    Py_XDECREF(c);
    return r < 0 || PyErr_Occurred() ? -1 : 0;
}

static PyObject *copy_table_value(PyObject *v) {
    PyObject *out;
    int r = copy_json(v, &out);
    return r > 0 ? out : r < 0 ? NULL : PyObject_CallOneArg(H_copy, v);
}

static PyObject *wdec_rule(Program *p, Py_ssize_t i, PyObject *src, WDec *d, int c) {
    WNode *w = &p->nodes[i];
    limb s;
    Hit h = {0, 0, 0};
    int found = COMPUTED(w->kind) ? 1 : cat_find_keyed(w, src, &h, &d->keys);
    if (found < 0) return NULL;
    if (!found) return wdec_node(p, w->other, d, c);
    Py_ssize_t k = h.k;
    if (!(c && w->leaves)) {
        if (wslot(d, w->total, &s) < 0) return NULL;
        if (s < w->esc) {
            if (wtake(d, s, 0, w->esc, w->total) < 0) return NULL;
            return wdec_node(p, w->other, d, c);
        }
        if (wtake(d, s, w->esc, w->total - w->esc, w->total) < 0) return NULL;
    }
    if (COMPUTED(w->kind)) {
        PyObject *t = computed(w, src);
        if (t != NULL && c && w->kind == K_SUM && !PyObject_IsTrue(t)) Py_CLEAR(t);  /* 0: never common */
        if (t == NULL && !PyErr_Occurred())
            derr(c ? "a predicted field has no prediction on the common path" : "a predicted field has no prediction");
        return t;
    }
    PyObject *q = PyTuple_GET_ITEM(w->preds, k);
    if (w->kind == K_PREFIXED) {
        PyObject *rest = wdec_node(p, w->a, d, c);
        if (rest == NULL) return NULL;
        if (!PyUnicode_CheckExact(rest)) { Py_DECREF(rest); return derr("a prefixed field cannot be rebuilt"); }
        PyObject *out = PyUnicode_Concat(q, rest);
        Py_DECREF(rest);
        return out;
    }
    if (c && !w->plain[k]) return derr("a given field has no plain prediction on the common path");
    if (PyDict_Check(q) || PyList_Check(q)) return copy_table_value(q);
    Py_INCREF(q);
    return q;
}

/* --- text decoded in place -------------------------------------------------------------------
 * A words, shape or template node writes its parts (a categorical's str, chars, digits,
 * literals) straight into one buffer, Latin-1 until a wider character comes, then UCS4, and
 * makes one str at the end: no str a part, no reference counts, no join. */
typedef struct {
    unsigned char *buf;
    Py_ssize_t n, cap;  /* characters held; bytes of buf */
    int wide;           /* buf holds Py_UCS4 */
    Py_UCS4 maxc;       /* 127 or 255 while not wide: the text's widest character */
    unsigned char stack[256];
} TBuf;

static inline void tb_init(TBuf *t) {
    t->buf = t->stack;
    t->n = 0;
    t->cap = sizeof t->stack;
    t->wide = 0;
    t->maxc = 127;
}

static inline void tb_free(TBuf *t) {
    if (t->buf != t->stack) PyMem_Free(t->buf);
}

static inline Py_UCS4 tb_at(const TBuf *t, Py_ssize_t q) {
    return t->wide ? ((const Py_UCS4 *)t->buf)[q] : t->buf[q];
}

static int tb_grow(TBuf *t, Py_ssize_t more, int wide) {
    int w = t->wide || wide;
    size_t unit = w ? 4 : 1;
    if (more > PY_SSIZE_T_MAX / 8 - t->n) { PyErr_NoMemory(); return -1; }
    size_t need = (size_t)(t->n + more) * unit, cap = (size_t)t->cap;
    while (cap < need) cap *= 2;
    unsigned char *b = PyMem_Malloc(cap);
    if (b == NULL) { PyErr_NoMemory(); return -1; }
    if (w && !t->wide) {
        for (Py_ssize_t q = 0; q < t->n; q++) ((Py_UCS4 *)b)[q] = t->buf[q];
    } else {
        memcpy(b, t->buf, (size_t)t->n * unit);
    }
    tb_free(t);
    t->buf = b;
    t->cap = (Py_ssize_t)cap;
    t->wide = w;
    return 0;
}

/* Room for more characters, UCS4 ones if wide. */
static inline int tb_room(TBuf *t, Py_ssize_t more, int wide) {
    if ((!wide || t->wide) && (t->n + more) * (t->wide ? 4 : 1) <= t->cap) return 0;
    return tb_grow(t, more, wide);
}

static inline int tb_ascii(TBuf *t, const char *s, Py_ssize_t n) {
    if (tb_room(t, n, 0) < 0) return -1;
    if (t->wide) {
        for (Py_ssize_t q = 0; q < n; q++) ((Py_UCS4 *)t->buf)[t->n + q] = (unsigned char)s[q];
    } else {
        memcpy(t->buf + t->n, s, (size_t)n);
    }
    t->n += n;
    return 0;
}

static inline int tb_str(TBuf *t, PyObject *x) {
    Py_ssize_t len = PyUnicode_GET_LENGTH(x);
    Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(x);
    if (tb_room(t, len, m > 255) < 0) return -1;
    if (m > t->maxc) t->maxc = m;
    int kind = PyUnicode_KIND(x);
    const void *data = PyUnicode_DATA(x);
    if (!t->wide) {  /* m <= 255: a byte a character */
        memcpy(t->buf + t->n, data, (size_t)len);
    } else if (kind == PyUnicode_4BYTE_KIND) {
        memcpy(t->buf + t->n * 4, data, (size_t)len * 4);
    } else {
        for (Py_ssize_t q = 0; q < len; q++) ((Py_UCS4 *)t->buf)[t->n + q] = PyUnicode_READ(kind, data, q);
    }
    t->n += len;
    return 0;
}

/* The characters a..b as a str (canonical: Python finds its width). */
static PyObject *tb_slice(const TBuf *t, Py_ssize_t a, Py_ssize_t b) {
    int unit = t->wide ? 4 : 1;
    return PyUnicode_FromKindAndData(t->wide ? PyUnicode_4BYTE_KIND : PyUnicode_1BYTE_KIND, t->buf + a * unit, b - a);
}

static PyObject *tb_finish(const TBuf *t) {
    if (t->wide) return tb_slice(t, 0, t->n);
    PyObject *out = PyUnicode_New(t->n, t->maxc);  /* maxc is exact: 127 or 255 */
    if (out != NULL) memcpy(PyUnicode_1BYTE_DATA(out), t->buf, (size_t)t->n);
    return out;
}

/* Whether characters a..b are a text the encoder could have written as words: no space at
 * either end, none doubled (Words.fits). */
static int tb_plain(const TBuf *t, Py_ssize_t a, Py_ssize_t b) {
    if (b == a) return 0;
    if (tb_at(t, a) == ' ' || tb_at(t, b - 1) == ' ') return 0;
    int doubled = 0;
    if (!t->wide) {
        for (Py_ssize_t q = a + 1; q < b; q++) doubled |= (t->buf[q] == ' ') & (t->buf[q - 1] == ' ');
    } else {
        for (Py_ssize_t q = a + 1; q < b; q++) doubled |= (tb_at(t, q) == ' ') & (tb_at(t, q - 1) == ' ');
    }
    return !doubled;
}

/* Whether characters a..b are one or more ASCII letters ('a') or digits (else). */
static int tb_of_kind(const TBuf *t, Py_ssize_t a, Py_ssize_t b, char k) {
    if (b == a) return 0;
    for (Py_ssize_t q = a; q < b; q++) {
        Py_UCS4 ch = tb_at(t, q);
        if (k == 'a' ? !is_letter(ch) : !is_digit(ch)) return 0;
    }
    return 1;
}

/* The row of table t whose slots hold s (t->esc <= s < t->total): from its guide bucket's row,
 * on while the next row starts at or below s (the table's last word, its total, stops it). */
static inline const uint64_t *char_find(const Chars *ch, const CharDec *t, limb s) {
    const uint64_t *row = ch->rows + t->off + t->guide[s >> t->gshift];
    while (row_start(row[1]) <= s) row++;
    return row;
}

/* The range decoder's state in locals, for a loop of many symbols (a string's bytes): the
 * compiler keeps them in registers, where through WDec every store of a decoded byte (a char
 * store may alias anything) made it reload and store them. Same arithmetic as wslot, wtake. */
typedef struct {
    limb rx, rrng, rr;
    Py_ssize_t rn, budget, len;
    const unsigned char *data;
} RDec;

static inline void rdec_get(RDec *r, const WDec *d) {
    r->rx = d->rx;
    r->rrng = d->rrng;
    r->rr = d->rr;
    r->rn = d->rn;
    r->budget = d->budget;
    r->len = d->len;
    r->data = (const unsigned char *)PyBytes_AS_STRING(d->data);
}

static inline void rdec_put(const RDec *r, WDec *d) {
    d->rx = r->rx;
    d->rrng = r->rrng;
    d->rr = r->rr;
    d->rn = r->rn;
    d->budget = r->budget;
}

static inline __attribute__((always_inline)) int rdec_slot(RDec *r, limb T, uint64_t magic, uint8_t shift, limb *s) {
    r->rr = div_by(r->rrng, magic, shift);
    *s = r->rx / r->rr;
    if (*s >= T) {
        derr("learned-model payload is not one this model writes (a slot past the total)");
        return -1;
    }
    return 0;
}

static inline __attribute__((always_inline)) int rdec_take(RDec *r, limb st, limb fr) {
    if (--r->budget < 0) {
        derr("learned-model payload asks for more symbols than it can hold");
        return -1;
    }
    r->rx -= r->rr * st;
    r->rrng = r->rr * fr;
    range_refill(&r->rx, &r->rrng, &r->rn, r->data, r->len);
    return 0;
}

/* A symbol of chars table t (its row's byte, or -1 for its escape), on the range coder. */
static inline __attribute__((always_inline)) int rdec_char(const Chars *ch, const CharDec *t, RDec *r, int *x) {
    limb s;
    if (rdec_slot(r, t->total, t->magic, t->dshift, &s) < 0) return -1;
    if (s < t->esc) {
        *x = -1;
        return rdec_take(r, 0, t->esc);
    }
    const uint64_t *w = char_find(ch, t, s);
    *x = row_sym(w[0]);
    return rdec_take(r, row_start(w[0]), row_freq(w));
}

/* A string through a chars node's tables, up to its end symbol (spec §2, Characters): appended
 * to into, or else made *out. Its bytes must be UTF-8 on their own, whatever comes around them. */
static int wdec_chars(const Chars *ch, WDec *d, TBuf *into, PyObject **out) {
    const CharDec *base = &ch->dec[CHAR_BASE];
    unsigned char stack[256], *buf = stack;
    Py_ssize_t n = 0, cap = sizeof stack;
    int rc = -1;
    PyObject *text = NULL;
    int before = CHAR_END;
    RDec r;
    if (!d->range) {  /* (format 5's block coder has no chars node: the reader refuses one) */
        PyErr_SetString(PyExc_SystemError, "a chars node on the block coder");
        return -1;
    }
    rdec_get(&r, d);
    for (;;) {
        const CharDec *t = &ch->dec[before];
        int x = -1;
        if (t->n && rdec_char(ch, t, &r, &x) < 0) goto done;
        if (x < 0) {
            if (rdec_char(ch, base, &r, &x) < 0) goto done;
            if (x < 0) {  /* the base table's escape: a byte, uniform */
                limb s;
                r.rr = r.rrng / CHAR_BYTES;
                s = r.rx / r.rr;
                if (s >= CHAR_BYTES) {
                    derr("learned-model payload is not one this model writes (a slot past the total)");
                    goto done;
                }
                if (rdec_take(&r, s, 1) < 0) goto done;
                x = (int)s;
                if (char_has(&ch->tab[CHAR_BASE], x)) { derr("chars: an escape to a byte its table lists"); goto done; }
            }
            if (t->n && char_has(&ch->tab[before], x)) { derr("chars: an escape to a byte its table lists"); goto done; }
        }
        if (x == CHAR_END) break;
        if (n == cap) {
            unsigned char *grown = PyMem_Malloc((size_t)cap * 2);
            if (grown == NULL) { PyErr_NoMemory(); goto done; }
            memcpy(grown, buf, (size_t)n);
            if (buf != stack) PyMem_Free(buf);
            buf = grown;
            cap *= 2;
        }
        buf[n++] = (unsigned char)x;
        before = x;
    }
    rdec_put(&r, d);
    unsigned char high = 0;
    for (Py_ssize_t q = 0; q < n; q++) high |= buf[q];
    if (high < 0x80) {  /* ASCII: the bytes are the characters */
        if (into != NULL) {
            rc = tb_ascii(into, (const char *)buf, n);
        } else if ((*out = PyUnicode_New(n, 127)) != NULL) {
            memcpy(PyUnicode_1BYTE_DATA(*out), buf, (size_t)n);
            rc = 0;
        }
        goto done;
    }
    text = PyUnicode_DecodeUTF8((const char *)buf, n, "strict");
    if (text == NULL) {
        if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            PyErr_Clear();
            derr("chars: the bytes are not UTF-8");
        }
    } else if (into == NULL) {
        *out = text;
        text = NULL;
        rc = 0;
    } else {
        rc = tb_str(into, text);
    }
done:
    Py_XDECREF(text);
    if (buf != stack) PyMem_Free(buf);
    return rc;
}

/* The entry holding slot s of a categorical node: from the node's own line where it can. */
static inline Py_ssize_t wn_entry(const WNode *w, limb s) {
    if (w->guided) {
        Py_ssize_t e = w->slot16[(s - w->esc) >> GUIDE_SHIFT];
        while (w->ent[e + 1].start <= s) e++;
        return e;
    }
    return w->slot16 ? w->slot16[s - w->esc] : table_entry(w->table, s);
}

/* A categorical's entry (1, in *k) or its escape (0); -1 on an error. */
static inline int cat_entry(const WNode *w, WDec *d, int c, Py_ssize_t *k) {
    limb s, esc = w->esc, total = w->total;
    if (c && w->leaves) {  /* a hit given a hit (slots below the escape's) */
        if (w->k == 1) {
            *k = 0;
            return 1;
        }
        if (wslot(d, total - esc, &s) < 0) return -1;
        *k = wn_entry(w, s + esc);
        return wtake(d, s, w->ent[*k].start - esc, ent_freq(&w->ent[*k]), total - esc) < 0 ? -1 : 1;
    }
    if (wslot(d, total, &s) < 0) return -1;
    if (s < esc) return wtake(d, s, 0, esc, total) < 0 ? -1 : 0;
    *k = wn_entry(w, s);
    return wtake(d, s, w->ent[*k].start, ent_freq(&w->ent[*k]), total) < 0 ? -1 : 1;
}

/* A categorical's value: its own object, or a copy where it can be changed. */
static inline PyObject *cat_value(const WNode *w, PyObject *v) {
    if (w->mutable_ && (PyDict_Check(v) || PyList_Check(v))) return copy_table_value(v);
    Py_INCREF(v);
    return v;
}

/* An escaping node's escape (1) or hit (0), -1 on an error; on the common path none is coded
 * but for a chained object's. */
static inline int escaped(const WNode *w, WDec *d, int c) {
    limb s;
    if (c && !w->chained) return 0;
    if (wslot(d, w->total, &s) < 0) return -1;
    if (s < w->esc) return wtake(d, s, 0, w->esc, w->total) < 0 ? -1 : 1;
    return wtake(d, s, w->esc, w->total - w->esc, w->total) < 0 ? -1 : 0;
}

static int wdec_text(Program *p, Py_ssize_t i, WDec *d, int c, TBuf *t, PyObject **obj);

/* A template's text: the prefix, then the digits zero-padded to the width. */
static int template_into(Program *p, const WNode *w, WDec *d, int c, TBuf *t) {
    PyObject *o = wdec_node(p, w->a, d, c);
    if (o == NULL) return -1;
    char buf[32];
    Py_ssize_t nd = 0, limit = w->width ? w->width : 30;
    int overflow = 0;
    long long n = PyLong_CheckExact(o) ? PyLong_AsLongLongAndOverflow(o, &overflow) : -1;
    if (n == -1 && PyErr_Occurred()) { Py_DECREF(o); return -1; }
    if (overflow > 0) {  /* past 2^63: the int's own decimal text */
        PyObject *digits = PyObject_Str(o);
        Py_DECREF(o);
        if (digits == NULL) return -1;
        nd = PyUnicode_GET_LENGTH(digits);
        if (nd <= limit) memcpy(buf, PyUnicode_DATA(digits), (size_t)nd);  /* ASCII, nd <= 30 */
        Py_DECREF(digits);
    } else {
        Py_DECREF(o);
        if (n < 0) { derr("template digits out of range"); return -1; }
        do { buf[31 - nd++] = (char)('0' + n % 10); n /= 10; } while (n);
        memmove(buf, buf + 32 - nd, (size_t)nd);
    }
    if (nd > limit) { derr("template digits out of range"); return -1; }
    static const char zeros[] = "000000000000000000000000000000";  /* width <= 30 */
    Py_ssize_t pad = w->width ? w->width - nd : 0;
    if (tb_str(t, w->prefix) < 0 || tb_ascii(t, zeros, pad) < 0) return -1;
    return tb_ascii(t, buf, nd);
}

static void shape_field_error(PyObject *f) {
    PyObject *r = PyObject_Repr(f);
    if (r) {
        PyErr_Format(H_DecodeError, "learned-model payload has a shape field %U not of its kind", r);
        Py_DECREF(r);
    }
}

/* A shape's text: literal, field, literal, ..., literal; each field letters or digits. */
static int shape_into(Program *p, const WNode *w, WDec *d, int c, TBuf *t) {
    if (tb_str(t, PyTuple_GET_ITEM(w->literals, 0)) < 0) return -1;
    for (Py_ssize_t j = 0; j < w->nkids; j++) {
        Py_ssize_t a = t->n;
        PyObject *x = NULL;
        int r = wdec_text(p, w->kids[j], d, c, t, &x);
        if (r < 0) return -1;
        if (r == 0) {  /* a value not made as text here: it must be a str */
            r = PyUnicode_CheckExact(x) ? tb_str(t, x) : (shape_field_error(x), -1);
            Py_DECREF(x);
            if (r < 0) return -1;
        }
        if (!tb_of_kind(t, a, t->n, w->kinds[j])) {
            PyObject *f = tb_slice(t, a, t->n);
            if (f) shape_field_error(f);
            Py_XDECREF(f);
            return -1;
        }
        if (tb_str(t, PyTuple_GET_ITEM(w->literals, j + 1)) < 0) return -1;
    }
    return 0;
}

/* Words' text: the count, then each word (space-separated unless tokens), none empty. */
static int words_into(Program *p, const WNode *w, WDec *d, int c, TBuf *t) {
    Py_ssize_t n, start = t->n;
    if (wdec_count(p, w->a, d, c, 1, MAX_WORDS, "word count out of range", &n) < 0) return -1;
    if (c && wspend(d, n) < 0) return -1;
    for (Py_ssize_t m = 0; m < n; m++) {
        if (m && !w->tokens && tb_ascii(t, " ", 1) < 0) return -1;
        Py_ssize_t a = t->n;
        PyObject *x = NULL;
        int r = wdec_text(p, w->kids[m < w->nkids ? m : w->nkids - 1], d, c, t, &x);
        if (r < 0) return -1;
        if (r == 0) {
            r = PyUnicode_CheckExact(x) ? tb_str(t, x) : (derr("a word decoded to a non-string"), -1);
            Py_DECREF(x);
            if (r < 0) return -1;
        }
        if (t->n == a) { derr("a word decoded to a non-string"); return -1; }
    }
    /* a text the encoder could have written (no leading, trailing or double space) */
    if (!w->tokens && !tb_plain(t, start, t->n)) {
        derr("words decoded to a text the model cannot have written");
        return -1;
    }
    return 0;
}

/* Node i's value appended to t where the node makes it as text (1): a categorical's str,
 * chars, a template, a shape, words (after their escape, coded as wdec_node does); else (0) the value in *obj, for the caller to check and
 * append. -1 on an error. */
static int wdec_text(Program *p, Py_ssize_t i, WDec *d, int c, TBuf *t, PyObject **obj) {
    WNode *w = &p->nodes[i];
    int r;
    switch (w->kind) {
    case K_CAT: {
        Py_ssize_t k;
        if ((r = cat_entry(w, d, c, &k)) <= 0) return r < 0 ? -1 : wdec_text(p, w->other, d, c, t, obj);
        const TEntry *e = &w->ent[k];
        if (e->tlen) return tb_ascii(t, e->text, e->tlen) < 0 ? -1 : 1;
        PyObject *v = e->value;
        if (PyUnicode_CheckExact(v)) return tb_str(t, v) < 0 ? -1 : 1;
        *obj = cat_value(w, v);
        return *obj ? 0 : -1;
    }
    case K_CHARS:
    case K_TEMPLATE:
    case K_SHAPE:
    case K_WORDS:  /* escaping kinds: the escape first */
        if ((r = escaped(w, d, c)) != 0) {
            if (r < 0) return -1;
            if (w->other >= 0) return wdec_text(p, w->other, d, c, t, obj);
            *obj = wdec_raw(d);
            return *obj ? 0 : -1;
        }
        r = w->kind == K_CHARS      ? wdec_chars(w->chars, d, t, NULL)
            : w->kind == K_TEMPLATE ? template_into(p, w, d, c, t)
            : w->kind == K_SHAPE    ? shape_into(p, w, d, c, t)
                                    : words_into(p, w, d, c, t);
        return r < 0 ? -1 : 1;
    default:
        *obj = wdec_node(p, i, d, c);
        return *obj ? 0 : -1;
    }
}

/* A template's, shape's or words' value: its text in one str, or what its escape gave. */
static PyObject *wdec_string(Program *p, Py_ssize_t i, WDec *d, int c) {
    TBuf t;
    tb_init(&t);
    PyObject *obj = NULL;
    int r = wdec_text(p, i, d, c, &t, &obj);
    PyObject *out = r < 0 ? NULL : r == 0 ? obj : tb_finish(&t);
    tb_free(&t);
    return out;
}

static PyObject *wdec_node(Program *p, Py_ssize_t i, WDec *d, int c) {
    WNode *w = &p->nodes[i];
    switch (w->kind) {
    case K_PY:
    case K_GIVEN:
    case K_PREFIXED:
    case K_AFFIX:
    case K_SUM:
        return PyObject_CallMethodObjArgs(w->py, c ? S_decode_common : S_decode, (PyObject *)d, NULL);
    case K_RAW:
        if (c) return derr("learned-model payload says common path where the model has none");
        return wdec_raw(d);
    case K_CAT: {
        Py_ssize_t k;
        int r = cat_entry(w, d, c, &k);
        if (r <= 0) return r < 0 ? NULL : wdec_node(p, w->other, d, c);
        return cat_value(w, w->ent[k].value);
    }
    case K_TEMPLATE:
    case K_SHAPE:
    case K_WORDS:
        return wdec_string(p, i, d, c);
    default:
        break;
    }
    /* the escaping kinds: the escape, or the value (on the common path, no symbol) */
    if (c && w->kind == K_MAP) return derr("learned-model payload says common path where the model has none");
    switch (escaped(w, d, c)) {  /* a chained object codes its hit or escape on the common path too */
    case -1:
        return NULL;
    case 1:
        return w->other >= 0 ? wdec_node(p, w->other, d, c) : wdec_raw(d);
    }
    switch (w->kind) {
    case K_RANGE: {
        limb u;
        if (wuni(d, w->span, &u) < 0) return NULL;
        __int128 r = (__int128)w->lo + u;
        if (r >= INT64_MIN && r <= INT64_MAX) return PyLong_FromLongLong((long long)r);
        PyObject *a = PyLong_FromLongLong(w->lo), *b = PyLong_FromUnsignedLongLong(u);
        PyObject *out = (a && b) ? PyNumber_Add(a, b) : NULL;
        Py_XDECREF(a); Py_XDECREF(b);
        return out;
    }
    case K_MAG: {
        PyObject *o = wdec_node(p, w->a, d, c);
        if (o == NULL) return NULL;
        long b = PyLong_CheckExact(o) ? PyLong_AsLong(o) : 1000;
        if (b == -1 && PyErr_Occurred()) { PyErr_Clear(); b = 1000; }
        if (b < -64 || b > 64) {
            PyObject *r = PyObject_Repr(o);
            Py_DECREF(o);
            if (r == NULL) return NULL;
            PyErr_Format(H_DecodeError, "learned-model payload has magnitude bucket %U (at most %c64)", r, 0xB1);
            Py_DECREF(r);
            return NULL;
        }
        Py_DECREF(o);
        long a = b < 0 ? -b : b;
        if (a < 2) return PyLong_FromLong(b);
        limb half = (limb)1 << (a - 1), u;
        if (wuni(d, half, &u) < 0) return NULL;
        limb mag = half + u;
        if (b > 0) return PyLong_FromUnsignedLongLong(mag);
        PyObject *m = PyLong_FromUnsignedLongLong(mag);
        if (m == NULL) return NULL;
        PyObject *out = PyNumber_Negative(m);
        Py_DECREF(m);
        return out;
    }
    case K_DEC: {
        PyObject *o = wdec_node(p, w->a, d, c);
        if (o == NULL) return NULL;
        if (!PyLong_CheckExact(o)) { Py_DECREF(o); return derr("decimal field decoded to a non-integer"); }
        int overflow;
        long long n = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow && n >= -(1LL << 53) && n <= (1LL << 53)) {
            /* as Python divides two ints that doubles hold exactly: one correctly rounded division */
            Py_DECREF(o);
            return PyFloat_FromDouble((double)n / w->pow10);
        }
        PyObject *out = PyNumber_TrueDivide(o, w->pow10_obj);
        Py_DECREF(o);
        return out;
    }
    case K_OBJECT: {  /* the values in a C array; a list of those before only for a Python rule */
        Py_ssize_t n = w->nkids, m = 0;
        PyObject *stack[32], **vals = n <= 32 ? stack : PyMem_Malloc((size_t)(n ? n : 1) * sizeof(PyObject *)), *out = NULL;
        if (vals == NULL) return PyErr_NoMemory();
        for (; m < n; m++) {
            WNode *kid = &p->nodes[w->kids[m]];
            PyObject *x;
            if (C_RULE(kid->kind) && kid->source < m) {
                x = wdec_rule(p, w->kids[m], vals[kid->source], d, c);
            } else if (w->rule[m]) {
                PyObject *ctx = PyList_New(m);
                if (ctx == NULL) goto obj_done;
                for (Py_ssize_t j = 0; j < m; j++) {
                    Py_INCREF(vals[j]);
                    PyList_SET_ITEM(ctx, j, vals[j]);
                }
                x = PyObject_CallMethodObjArgs(kid->py, c ? S_decode_common_in : S_decode_in, (PyObject *)d, ctx, NULL);
                Py_DECREF(ctx);
            } else {
                x = wdec_node(p, w->kids[m], d, c);
            }
            if (x == NULL) goto obj_done;
            vals[m] = x;
        }
        out = _PyDict_NewPresized(n);
        if (out == NULL) goto obj_done;
        for (Py_ssize_t j = 0; j < n; j++)
            if (PyDict_SetItem(out, PyTuple_GET_ITEM(w->keys, j), vals[j]) < 0) {
                Py_CLEAR(out);
                break;
            }
    obj_done:
        for (Py_ssize_t j = 0; j < m; j++) Py_DECREF(vals[j]);
        if (vals != stack) PyMem_Free(vals);
        return out;
    }
    case K_ARRAY: {
        Py_ssize_t n;
        if (wdec_count(p, w->a, d, c, 0, MAX_LENGTH, "array length out of range", &n) < 0) return NULL;
        if (c && wspend(d, n) < 0) return NULL;
        PyObject *out = PyList_New(0);
        if (out == NULL) return NULL;
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *x = wdec_node(p, w->b, d, c);
            if (x == NULL || PyList_Append(out, x) < 0) { Py_XDECREF(x); Py_DECREF(out); return NULL; }
            Py_DECREF(x);
        }
        return out;
    }
    case K_CHARS: {
        PyObject *out = NULL;
        return wdec_chars(w->chars, d, NULL, &out) < 0 ? NULL : out;
    }
    case K_MAP: {
        Py_ssize_t n;
        if (wdec_count(p, w->a, d, 0, 0, MAX_LENGTH, "map size out of range", &n) < 0) return NULL;
        PyObject *out = PyDict_New();
        if (out == NULL) return NULL;
        for (Py_ssize_t j = 0; j < n; j++) {
            PyObject *k = wdec_node(p, w->b, d, 0);
            if (k == NULL) { Py_DECREF(out); return NULL; }
            int seen = PyUnicode_CheckExact(k) ? PyDict_Contains(out, k) : 1;
            if (seen != 0) {
                Py_DECREF(k);
                Py_DECREF(out);
                return seen < 0 ? NULL : derr("a map key is not a new string");
            }
            PyObject *x = wdec_node(p, w->c, d, 0);
            if (x == NULL || PyDict_SetItem(out, k, x) < 0) { Py_XDECREF(x); Py_DECREF(k); Py_DECREF(out); return NULL; }
            Py_DECREF(x);
            Py_DECREF(k);
        }
        return out;
    }
    }
    PyErr_SetString(PyExc_SystemError, "unknown program node");
    return NULL;
}

/* program.decode(decoder): the value through node 0 by the general rules (a frame's common
 * path is decoded by unframe()). */
static PyObject *program_decode(Program *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1 || Py_TYPE(args[0]) != &WDecType || p->n == 0) {
        PyErr_SetString(PyExc_TypeError, "decode(decoder: WalkDecoder)");
        return NULL;
    }
    if (Py_EnterRecursiveCall(" in the learned-model walk")) return NULL;
    PyObject *out = wdec_node(p, 0, (WDec *)args[0], 0);
    Py_LeaveRecursiveCall();
    return out;
}

/* program.setup(on, off, engine, both): what frame() and unframe() code with (format 6 and
 * later): the flag's two symbols (start, freq, total), the side stream's engine, and whether a
 * value is walked on both paths at once (Model._both). */
static PyObject *program_setup(Program *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[0]) != 3 ||
        PyTuple_GET_SIZE(args[1]) != 3) {
        PyErr_SetString(PyExc_TypeError, "setup(on: (start, freq, total), off: (start, freq, total), engine, both)");
        return NULL;
    }
    limb on[3], off[3];
    for (int j = 0; j < 3; j++)
        if (u64_arg(PyTuple_GET_ITEM(args[0], j), &on[j], "on") < 0 || u64_arg(PyTuple_GET_ITEM(args[1], j), &off[j], "off") < 0)
            return NULL;
    if (on[2] != off[2] || on[2] > RANGE_DIRECT || on[1] == 0 || off[1] == 0 || on[0] + on[1] > on[2] ||
        off[0] + off[1] > off[2]) {
        PyErr_SetString(PyExc_ValueError, "setup() needs two symbols of one total up to 2^40");
        return NULL;
    }
    int both = PyObject_IsTrue(args[3]);
    if (both < 0) return NULL;
    memcpy(p->on, on, sizeof on);
    memcpy(p->off, off, sizeof off);
    Py_INCREF(args[2]);
    Py_XSETREF(p->engine, args[2]);
    p->both = both;
    p->ready = p->n > 0;
    Py_RETURN_NONE;
}

/* The kind of a value whose payload a WEnc guesses the side stream's width for (see WEnc): its
 * type, list, dict or other, and its size's bit length. */
static int value_kind(PyObject *v) {
    Py_ssize_t n;
    int t;
    if (PyList_Check(v)) {
        n = PyList_GET_SIZE(v);
        t = 0;
    } else if (PyDict_Check(v)) {
        n = PyDict_GET_SIZE(v);
        t = 32;
    } else {
        return 63;
    }
    int bits = n ? 64 - __builtin_clzll((unsigned long long)n) : 0;
    return t + (bits < 31 ? bits : 31);
}

/* A range coder holding the flag's symbol for a value of kind: the program's spare k, emptied,
 * where reuse (a new reference either way). */
static WEnc *range_encoder(Program *p, int k, int reuse, const limb *flag, int kind) {
    WEnc *e = reuse ? (WEnc *)p->spare[k] : NULL;
    if (e != NULL) {
        Py_INCREF(e);
        e->nsym = e->side_n = e->items = e->count = 0;
        e->live = e->spec_w = 0;
        keys_forget(&e->keys);
    } else {
        e = (WEnc *)PyObject_CallOneArg((PyObject *)&WEncType, Py_True);
        if (e != NULL && reuse) {
            Py_INCREF(e);
            p->spare[k] = (PyObject *)e;
        }
    }
    if (e != NULL && !p->both && rlive_start(e) < 0) Py_CLEAR(e);
    if (e != NULL) e->kind = kind;
    if (e != NULL && rsym(e, flag[0], flag[1], flag[2]) < 0) Py_CLEAR(e);
    return e;
}

/* program.frame(value, head) -> frame: head, then value's payload (the common path's where value
 * stays on it, else the general rules'), in one call (Model.encode's format-6 paths); counted in
 * the program's seen, bits and misses. */
static PyObject *program_frame(Program *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "frame(value, head: bytes)");
        return NULL;
    }
    if (!p->ready) { PyErr_SetString(PyExc_TypeError, "frame() before setup()"); return NULL; }
    PyObject *v = args[0], *out = NULL;
    int reuse = !p->busy;
    p->busy = 1;
    int kind = value_kind(v);
    WEnc *cm = range_encoder(p, 0, reuse, p->on, kind), *g = NULL, *chosen;
    RangeOut keep = {p->obuf, 0, p->ocap, 0, 0};
    int on = 1, rc;
    if (cm == NULL) goto done;
    if (Py_EnterRecursiveCall(" in the learned-model walk")) goto done;
    if (p->both) {
        g = range_encoder(p, 1, reuse, p->off, kind);
        rc = g == NULL ? -1 : wenc_both(p, 0, v, g, cm, &on);
    } else {
        rc = wenc_node(p, 0, v, cm, 1);
        if (rc == 1) {  /* off the common path: the general rules */
            on = 0;
            g = range_encoder(p, 1, reuse, p->off, kind);
            rc = g == NULL ? -1 : wenc_node(p, 0, v, g, 0);
        }
    }
    Py_LeaveRecursiveCall();
    if (rc < 0) goto done;
    chosen = on ? cm : g;
    PyObject *frame = range_payload(chosen, p->engine, PyBytes_AS_STRING(args[1]), PyBytes_GET_SIZE(args[1]),
                                    reuse ? &keep : NULL);
    if (reuse) {
        p->obuf = keep.b;
        p->ocap = keep.cap;
    }
    if (frame != NULL) {
        p->seen++;
        p->bits += 8 * (long long)(PyBytes_GET_SIZE(frame) - PyBytes_GET_SIZE(args[1]));
        p->misses += !on;
    }
    out = frame;
done:
    if (reuse) p->busy = 0;
    if (cm != NULL) keys_forget(&cm->keys);
    if (g != NULL) keys_forget(&g->keys);
    Py_XDECREF(cm);
    Py_XDECREF(g);
    return out;
}

/* program.unframe(payload, max_size): the value of a format-6 payload (Walk.decode in one call). */
static PyObject *program_unframe(Program *p, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "unframe(payload: bytes, max_size)");
        return NULL;
    }
    if (!p->ready) { PyErr_SetString(PyExc_TypeError, "unframe() before setup()"); return NULL; }
    int reuse = !p->dbusy;
    WDec *d = reuse ? (WDec *)p->dspare : NULL;
    if (d == NULL) {
        d = (WDec *)WDecType.tp_alloc(&WDecType, 0);
        if (d == NULL) return NULL;
        if (reuse) {
            Py_INCREF(d);
            p->dspare = (PyObject *)d;
        }
    } else {
        Py_INCREF(d);
    }
    p->dbusy = 1;
    PyObject *out = NULL;
    if (wdec_start(d, args[0], p->engine, args[1], 1) < 0) goto done;
    limb T = p->on[2], s = d->rx / (d->rrng / T);
    if (s >= T) {
        derr("learned-model payload is not one this model writes (a slot past the total)");
        goto done;
    }
    int c = s <= p->on[0] + p->on[1] - 1;  /* Walk.decode: the flag's slot within on's */
    const limb *flag = c ? p->on : p->off;
    if (wslot(d, T, &s) < 0) goto done;
    if (s < flag[0] || s - flag[0] >= flag[1]) {
        PyErr_SetString(PyExc_ValueError, "take() of a symbol the payload does not hold");
        goto done;
    }
    if (wtake(d, s, flag[0], flag[1], T) < 0) goto done;
    if (Py_EnterRecursiveCall(" in the learned-model walk")) goto done;
    out = wdec_node(p, 0, d, c);
    Py_LeaveRecursiveCall();
    if (out != NULL) {
        PyObject *r = wdec_finish(d, NULL);
        if (r == NULL) Py_CLEAR(out);
        Py_XDECREF(r);
    }
done:
    keys_forget(&d->keys);
    if (reuse) {  /* the payload and side stream let go of until the next */
        Py_CLEAR(d->data);
        Py_CLEAR(d->buf);
        p->dbusy = 0;
    }
    Py_DECREF(d);
    return out;
}

static PyMethodDef program_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))program_encode, METH_FASTCALL, "Code a value by the general rules."},
    {"decode", (PyCFunction)(void (*)(void))program_decode, METH_FASTCALL, "Decode a value by the general rules."},
    {"encode_both", (PyCFunction)(void (*)(void))program_encode_both, METH_FASTCALL, "Both paths in one walk (format 6)."},
    {"setup", (PyCFunction)(void (*)(void))program_setup, METH_FASTCALL, "The flag's symbols, the side engine and the walk for frame()."},
    {"frame", (PyCFunction)(void (*)(void))program_frame, METH_FASTCALL, "A head and a value's payload (format 6), counted."},
    {"unframe", (PyCFunction)(void (*)(void))program_unframe, METH_FASTCALL, "The value of a format-6 payload."},
    {NULL},
};

static PyMemberDef program_members[] = {
    {"seen", T_LONGLONG, offsetof(Program, seen), READONLY, "Payloads frame() made."},
    {"bits", T_LONGLONG, offsetof(Program, bits), READONLY, "Their bits, heads left out."},
    {"misses", T_LONGLONG, offsetof(Program, misses), READONLY, "Those off the common path."},
    {NULL},
};

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "zeroc.learned._native.Program",
    .tp_basicsize = sizeof(Program),
    .tp_dealloc = (destructor)program_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A model's nodes for the general walk in C.",
    .tp_methods = program_methods,
    .tp_members = program_members,
    .tp_new = program_new,
};

/* bind(dumps, loads, as_key, copy_value, number, block_end, side, DecodeError, Off,
 * LimitExceeded, orjson.loads): what the walk calls back and raises (zeroc/learned/_walk.py binds them once). */
static PyObject *mod_bind(PyObject *m, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) { PyErr_SetString(PyExc_TypeError, "bind() takes 11 arguments"); return NULL; }
    PyObject **slots[] = {&H_dumps, &H_loads, &H_as_key, &H_copy, &H_number, &H_block, &H_side, &H_DecodeError,
                          &H_Off, &H_Limit, &H_fastloads};
    for (int i = 0; i < 11; i++) {
        Py_INCREF(args[i]);
        Py_XSETREF(*slots[i], args[i]);
    }
    Py_RETURN_NONE;
}

static PyMethodDef mod_methods[] = {
    {"fields", (PyCFunction)(void (*)(void))mod_fields, METH_FASTCALL, "fields(value, keys)"},
    {"decoder", (PyCFunction)(void (*)(void))mod_decoder, METH_FASTCALL, "decoder(data, low, rng, den)"},
    {"encoder", (PyCFunction)(void (*)(void))mod_encoder, METH_FASTCALL, "encoder(low, rng, den)"},
    {"bind", (PyCFunction)(void (*)(void))mod_bind, METH_FASTCALL, "bind(dumps, loads, as_key, copy_value, number, block_end, side, DecodeError)"},
    {NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "zeroc.learned._native", "The learned codec's exact coder on fixed-width limbs.", -1, mod_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&TableType) < 0 || PyType_Ready(&SymType) < 0 || PyType_Ready(&DecoderType) < 0 ||
        PyType_Ready(&EncoderType) < 0 || PyType_Ready(&WEncType) < 0 || PyType_Ready(&WDecType) < 0 ||
        PyType_Ready(&ProgramType) < 0)
        return NULL;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__POPCNT__)
    __builtin_cpu_init();
    has_popcnt = __builtin_cpu_supports("popcnt");
#endif
    S_encode = PyUnicode_InternFromString("encode");
    S_decode = PyUnicode_InternFromString("decode");
    S_encode_in = PyUnicode_InternFromString("encode_in");
    S_decode_in = PyUnicode_InternFromString("decode_in");
    S_encode_common = PyUnicode_InternFromString("encode_common");
    S_decode_common = PyUnicode_InternFromString("decode_common");
    S_encode_common_in = PyUnicode_InternFromString("encode_common_in");
    S_decode_common_in = PyUnicode_InternFromString("decode_common_in");
    S_compress = PyUnicode_InternFromString("compress");
    S_compress_in = PyUnicode_InternFromString("compress_in");
    S_dict = PyUnicode_InternFromString("dict");
    S_list = PyUnicode_InternFromString("list");
    S_float = PyUnicode_InternFromString("float");
    K_empty_dict = Py_BuildValue("(Oy)", S_dict, "{}");
    K_empty_list = Py_BuildValue("(Oy)", S_list, "[]");
    PyObject *seed = PyUnicode_FromString("zeroc.learned string index");
    Py_hash_t sh = seed ? PyObject_Hash(seed) : -1;
    Py_XDECREF(seed);
    if (sh == -1) return NULL;
    str_seed = (uint64_t)sh * 0x9e3779b97f4a7c15ULL;
    if (!S_encode || !S_decode || !S_encode_in || !S_decode_in || !S_encode_common || !S_decode_common ||
        !S_encode_common_in || !S_decode_common_in || !S_compress || !S_compress_in || !S_dict || !S_list || !S_float || !K_empty_dict ||
        !K_empty_list)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&TableType);
    if (PyModule_AddObject(m, "Table", (PyObject *)&TableType) < 0) { Py_DECREF(&TableType); Py_DECREF(m); return NULL; }
    Py_INCREF(&SymType);
    if (PyModule_AddObject(m, "Sym", (PyObject *)&SymType) < 0) { Py_DECREF(&SymType); Py_DECREF(m); return NULL; }
    PyTypeObject *walk[] = {&WEncType, &WDecType, &ProgramType};
    const char *names[] = {"WalkEncoder", "WalkDecoder", "Program"};
    for (int i = 0; i < 3; i++) {
        Py_INCREF(walk[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)walk[i]) < 0) { Py_DECREF(walk[i]); Py_DECREF(m); return NULL; }
    }
    return m;
}

/* dates.c — the date generator: calendar arithmetic, the held-out split, and a renderer that
 * writes one date in one of the formats of dates.h with randomly drawn details. */
#include "dates.h"

#include <stdio.h>
#include <string.h>

const char *const dates_weekday_names[7] = {"monday", "tuesday", "wednesday", "thursday",
                                            "friday", "saturday", "sunday"};
const char *const dates_month_names[12] = {"january", "february", "march",     "april",   "may",      "june",
                                           "july",    "august",   "september", "october", "november", "december"};

/* ---------------------------------------------------------------------------------------- */
/* Calendar                                                                                  */
/* ---------------------------------------------------------------------------------------- */

int dates_is_leap(int32_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int32_t dates_days_in_month(int32_t y, int32_t m) {
    static const int32_t days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12) return 0;
    return days[m - 1] + (m == 2 && dates_is_leap(y));
}

int dates_is_valid(date_ymd d) {
    return d.year >= DATES_YEAR_MIN && d.year <= DATES_YEAR_MAX && d.month >= 1 && d.month <= 12 && d.day >= 1 &&
           d.day <= dates_days_in_month(d.year, d.month);
}

/* Howard Hinnant's days_from_civil: years counted from March, so the leap day ends a year. */
int64_t dates_days_from_civil(date_ymd d) {
    const int64_t y = d.year - (d.month <= 2);
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (d.month + (d.month > 2 ? -3 : 9)) + 2) / 5 + d.day - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

date_ymd dates_civil_from_days(int64_t z) {
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    date_ymd d;
    d.day = (int32_t)(doy - (153 * mp + 2) / 5 + 1);
    d.month = (int32_t)(mp < 10 ? mp + 3 : mp - 9);
    d.year = (int32_t)(yoe + era * 400 + (d.month <= 2));
    return d;
}

/* 1970-01-01 was a Thursday (3 with Monday = 0). */
int dates_weekday(date_ymd d) {
    const int64_t w = (dates_days_from_civil(d) + 3) % 7;
    return (int)(w < 0 ? w + 7 : w);
}

/* splitmix64's finalizer: every bit of the date moves every bit of the hash. */
static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int dates_is_held_out(date_ymd d) {
    const uint64_t key = (uint64_t)d.year * 10000u + (uint64_t)d.month * 100u + (uint64_t)d.day;
    return mix64(key ^ 0xDA7E5u) % 10 == 0;
}

void dates_iso(date_ymd d, char out[DATES_ISO_LEN + 1]) {
    snprintf(out, DATES_ISO_LEN + 1, "%04d-%02d-%02d", (int)d.year, (int)d.month, (int)d.day);
}

/* ---------------------------------------------------------------------------------------- */
/* Rendering                                                                                 */
/* ---------------------------------------------------------------------------------------- */

typedef enum letter_case { CASE_LOWER, CASE_TITLE, CASE_UPPER } letter_case;

/* The text being written; longer than any input so that an overlong draw can be detected. */
typedef struct text {
    char s[96], fields[96]; /* the bytes, and the field each belongs to */
    size_t n;
    char field;             /* the field being written */
    letter_case lc;
    train_rng *rng;
} text;

static int chance(train_rng *r, double p) { return train_rng_uniform(r) < p; }

static void put(text *t, const char *s) {
    for (; *s && t->n + 1 < sizeof t->s; s++) {
        t->fields[t->n] = t->field;
        t->s[t->n++] = *s;
    }
    t->s[t->n] = t->fields[t->n] = '\0';
}

/* A word in the text's letter case; `name` words (weekdays, months) get a capital in title case. */
static void put_word(text *t, const char *w, int name) {
    char buf[16];
    size_t i = 0;
    for (; w[i] && i + 1 < sizeof buf; i++) {
        char c = w[i];
        if (c >= 'a' && c <= 'z' && (t->lc == CASE_UPPER || (t->lc == CASE_TITLE && name && i == 0)))
            c = (char)(c - 'a' + 'A');
        buf[i] = c;
    }
    buf[i] = '\0';
    put(t, buf);
}

/* The space between words: sometimes two. */
static void gap(text *t) { put(t, chance(t->rng, 0.1) ? "  " : " "); }

static void put_number(text *t, int v, int width) {
    char buf[16];
    snprintf(buf, sizeof buf, "%0*d", width, v);
    put(t, buf);
}

/* A number that writes one field of the date ('y', 'm' or 'd'). */
static void put_field(text *t, char field, int v, int width) {
    t->field = field;
    put_number(t, v, width);
    t->field = '.';
}

/* "st", "nd", "rd" or "th": 1st 2nd 3rd 4th … 11th 12th 13th … 21st 22nd 23rd … 31st. */
static const char *ordinal_suffix(int day) {
    if (day % 100 >= 11 && day % 100 <= 13) return "th";
    switch (day % 10) {
    case 1: return "st";
    case 2: return "nd";
    case 3: return "rd";
    default: return "th";
    }
}

static void put_weekday(text *t, date_ymd d) {
    const char *name = dates_weekday_names[dates_weekday(d)];
    t->field = 'w';
    if (chance(t->rng, 0.5)) {
        put_word(t, name, 1);
    } else {
        char abbr[4] = {name[0], name[1], name[2], '\0'};
        put_word(t, abbr, 1);
    }
    t->field = '.';
    if (chance(t->rng, 0.5)) put(t, ",");
    gap(t);
}

/* Full name, or a three-letter abbreviation ("sept" too), sometimes with a full stop. */
static void put_month(text *t, int month, double p_full) {
    const char *name = dates_month_names[month - 1];
    t->field = 'm';
    if (chance(t->rng, p_full)) {
        put_word(t, name, 1);
        t->field = '.';
        return;
    }
    char abbr[5] = {name[0], name[1], name[2], '\0', '\0'};
    if (month == 9 && chance(t->rng, 0.3)) abbr[3] = 't';
    put_word(t, abbr, 1);
    t->field = '.';
    if (chance(t->rng, 0.15)) put(t, ".");
}

/* The day of a name format: "21", "21st" (ordinal = 1) or, rarely, "05". */
static void put_day(text *t, int day, int ordinal) {
    put_field(t, 'd', day, ordinal || !chance(t->rng, 0.15) ? 1 : 2);
    if (ordinal) put_word(t, ordinal_suffix(day), 0);
}

/* "2026", or "26" / "'26" where `apostrophe_ok`. */
static void put_year(text *t, int year, double p_four, int apostrophe_ok) {
    const int four = chance(t->rng, p_four);
    if (!four && apostrophe_ok && chance(t->rng, 0.15)) put(t, "'");
    put_field(t, 'y', four ? year : year % 100, four ? 4 : 2);
}

static char numeric_separator(train_rng *r) {
    const double u = train_rng_uniform(r);
    return u < 0.45 ? '/' : u < 0.75 ? '-' : '.';
}

/* The separator of a numeric date, sometimes with spaces around it. */
static void put_separator(text *t, char sep, int spaced) {
    const char with_spaces[4] = {' ', sep, ' ', '\0'}, plain[2] = {sep, '\0'};
    put(t, spaced ? with_spaces : plain);
}

static void render_numeric(text *t, date_ymd d, int month_first) {
    const char sep = numeric_separator(t->rng);
    const int spaced = chance(t->rng, 0.05);
    const int first = month_first ? d.month : d.day, second = month_first ? d.day : d.month;
    put_field(t, month_first ? 'm' : 'd', first, chance(t->rng, 0.5) ? 2 : 1);
    put_separator(t, sep, spaced);
    put_field(t, month_first ? 'd' : 'm', second, chance(t->rng, 0.5) ? 2 : 1);
    put_separator(t, sep, spaced);
    put_year(t, d.year, 0.6, 0);
}

static dates_format render_once(text *t, date_ymd d, dates_format format) {
    train_rng *r = t->rng;
    if (chance(r, 0.04)) put(t, " ");
    switch (format) {
    case DATES_NAME_DMY: {
        const int ordinal = chance(r, 0.4);
        if (chance(r, 0.35)) put_weekday(t, d);
        if (ordinal && chance(r, 0.2)) {
            put_word(t, "the", 0);
            gap(t);
        }
        put_day(t, d.day, ordinal);
        gap(t);
        if (ordinal && chance(r, 0.4)) {
            put_word(t, "of", 0);
            gap(t);
        }
        put_month(t, d.month, 0.5);
        if (chance(r, 0.15)) put(t, ",");
        gap(t);
        put_year(t, d.year, 0.7, 1);
        break;
    }
    case DATES_NAME_MDY:
        if (chance(r, 0.35)) put_weekday(t, d);
        put_month(t, d.month, 0.5);
        gap(t);
        put_day(t, d.day, chance(r, 0.3));
        if (chance(r, 0.6)) put(t, ",");
        gap(t);
        put_year(t, d.year, 0.7, 1);
        break;
    case DATES_NAME_SEP: {
        const char sep[2] = {chance(r, 0.7) ? '-' : '/', '\0'};
        put_field(t, 'd', d.day, chance(r, 0.5) ? 2 : 1);
        put(t, sep);
        put_month(t, d.month, 0.2);
        put(t, sep);
        put_year(t, d.year, 0.6, 0);
        break;
    }
    case DATES_NUM_MDY:
        if (d.day > 12 || d.day == d.month) {
            render_numeric(t, d, 1);
            break;
        }
        format = DATES_NUM_DMY; /* it would read day-first: write it so */
        /* fall through */
    case DATES_NUM_DMY: render_numeric(t, d, 0); break;
    case DATES_NUM_YMD: {
        const char sep = numeric_separator(r);
        put_field(t, 'y', d.year, 4);
        put_separator(t, sep, 0);
        put_field(t, 'm', d.month, chance(r, 0.7) ? 2 : 1);
        put_separator(t, sep, 0);
        put_field(t, 'd', d.day, chance(r, 0.7) ? 2 : 1);
        break;
    }
    case DATES_N_FORMATS: break;
    }
    if (chance(r, 0.04)) put(t, " ");
    return format;
}

void dates_render(train_rng *rng, date_ymd d, dates_format format, date_pair *out) {
    text t;
    const double u = train_rng_uniform(rng);
    const letter_case lc = u < 0.45 ? CASE_LOWER : u < 0.8 ? CASE_TITLE : CASE_UPPER;
    dates_format written;
    do { /* a draw longer than DATES_MAX_SRC is drawn again (short forms always fit) */
        memset(&t, 0, sizeof t);
        t.field = '.';
        t.lc = lc;
        t.rng = rng;
        written = render_once(&t, d, format);
    } while (t.n > DATES_MAX_SRC);
    memcpy(out->src, t.s, t.n + 1);
    memcpy(out->fields, t.fields, t.n + 1);
    dates_iso(d, out->iso);
    out->date = d;
    out->format = written;
}

void dates_sample(train_rng *rng, dates_split split, date_pair *out) {
    const date_ymd first = {DATES_YEAR_MIN, 1, 1}, last = {DATES_YEAR_MAX, 12, 31};
    const int64_t d0 = dates_days_from_civil(first), n_days = dates_days_from_civil(last) - d0 + 1;
    date_ymd d;
    do d = dates_civil_from_days(d0 + train_rng_below(rng, n_days));
    while (dates_is_held_out(d) != (split == DATES_TEST));
    dates_render(rng, d, (dates_format)train_rng_below(rng, DATES_N_FORMATS), out);
}

/* ---------------------------------------------------------------------------------------- */
/* Tokens                                                                                    */
/* ---------------------------------------------------------------------------------------- */

int32_t dates_token(char c) {
    const unsigned char u = (unsigned char)c;
    return u >= 0x20 && u <= 0x7E ? DATES_FIRST_CHAR + (int32_t)(u - 0x20) : DATES_UNK;
}

void dates_vocab(char texts[DATES_N_VOCAB][8], const char *tokens[DATES_N_VOCAB], int32_t types[DATES_N_VOCAB]) {
    static const char *const control[DATES_FIRST_CHAR] = {"<pad>", "<bos>", "<eos>", "<unk>"};
    for (int32_t i = 0; i < DATES_N_VOCAB; i++) {
        if (i < DATES_FIRST_CHAR) {
            snprintf(texts[i], 8, "%s", control[i]);
            types[i] = i == DATES_UNK ? 2 : 3;
        } else {
            texts[i][0] = (char)(0x20 + i - DATES_FIRST_CHAR);
            texts[i][1] = '\0';
            types[i] = 1;
        }
        tokens[i] = texts[i];
    }
}

void dates_encode_pair(const date_pair *p, int32_t *src, int32_t *n_src, int32_t tgt_in[DATES_ISO_LEN + 1],
                       int32_t tgt_out[DATES_ISO_LEN + 1]) {
    int32_t n = 0;
    for (; p->src[n] && n < DATES_MAX_SRC; n++) src[n] = dates_token(p->src[n]);
    *n_src = n;
    tgt_in[0] = DATES_BOS;
    for (int32_t i = 0; i < DATES_ISO_LEN; i++) {
        tgt_in[i + 1] = dates_token(p->iso[i]);
        tgt_out[i] = tgt_in[i + 1];
    }
    tgt_out[DATES_ISO_LEN] = DATES_EOS;
}

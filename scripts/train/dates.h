/* dates.h — Model B's task: dates as people write them, paired with their ISO 8601 form.
 *
 *   "sat 21 nov 2026"            → "2026-11-21"
 *   "November 21st, 2026"        → "2026-11-21"
 *   "21/11/26", "11-21-2026"     → "2026-11-21"
 *
 * Every pair comes from a seeded train_rng, so a seed gives the same pairs on every machine.
 * Dates run from 1950-01-01 to 2049-12-31 (two-digit years: 50–99 are 19xx, 00–49 20xx).
 * Some 10% of the calendar days are held out, chosen by a hash of the date: pairs drawn for
 * DATES_TRAIN never carry a held-out day, pairs drawn for DATES_TEST carry nothing else.
 *
 * The input must have one reading. Numeric dates are day-first unless the year comes first
 * (four digits only: "2026.11.21"); month-first numeric dates ("11/21/2026") are written only
 * when they cannot be read day-first (day > 12, or day == month). A weekday, when written,
 * is the date's real weekday. Inputs are at most DATES_MAX_SRC bytes of ASCII. */
#ifndef TRAIN_DATES_H
#define TRAIN_DATES_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

#define DATES_YEAR_MIN 1950
#define DATES_YEAR_MAX 2049
#define DATES_MAX_SRC 32
#define DATES_ISO_LEN 10 /* "YYYY-MM-DD" */

typedef struct date_ymd {
    int32_t year, month, day; /* month 1–12, day 1–31 */
} date_ymd;

/* The ways a date is written; the renderer varies case, spacing and details within each. */
typedef enum dates_format {
    DATES_NAME_DMY,  /* [weekday[,]] [the] 21[st] [of] Nov[.|ember][,] 2026 | '26 | 26 */
    DATES_NAME_MDY,  /* [weekday[,]] November 21[st][,] 2026 */
    DATES_NAME_SEP,  /* 21-Nov-2026, 21/NOV/26 */
    DATES_NUM_DMY,   /* 21/11/2026, 21.11.26, 01-02-2026 */
    DATES_NUM_MDY,   /* 11/21/2026: only when day > 12 or day == month (else rendered day-first) */
    DATES_NUM_YMD,   /* 2026-11-21, 2026/1/5, 2026.11.21 */
    DATES_N_FORMATS
} dates_format;

typedef enum dates_split { DATES_TRAIN, DATES_TEST } dates_split;

typedef struct date_pair {
    char src[DATES_MAX_SRC + 1];   /* the human form, NUL-terminated */
    char fields[DATES_MAX_SRC + 1];/* what each byte of src writes: 'y' year, 'm' month, 'd' day,
                                    * 'w' weekday, '.' anything else ("the", "of", suffixes,
                                    * separators, spaces) */
    char iso[DATES_ISO_LEN + 1];   /* "YYYY-MM-DD" */
    date_ymd date;
    dates_format format;           /* the format rendered (NUM_MDY may become NUM_DMY) */
} date_pair;

int dates_is_leap(int32_t year);
int32_t dates_days_in_month(int32_t year, int32_t month);
int dates_is_valid(date_ymd d);
/* Days since 1970-01-01 (negative before), proleptic Gregorian. */
int64_t dates_days_from_civil(date_ymd d);
date_ymd dates_civil_from_days(int64_t days);
/* 0 = Monday … 6 = Sunday. */
int dates_weekday(date_ymd d);
/* 1 when the day belongs to the held-out (test) split. */
int dates_is_held_out(date_ymd d);
void dates_iso(date_ymd d, char out[DATES_ISO_LEN + 1]);

/* English names, lower case: "monday", "january"; index 0 = Monday / January. */
extern const char *const dates_weekday_names[7];
extern const char *const dates_month_names[12];

/* One pair: a uniformly drawn day of the split, a uniformly drawn format, and the details
 * (case, abbreviations, ordinals, separators, zero padding, extra spaces) drawn from rng. */
void dates_sample(train_rng *rng, dates_split split, date_pair *out);
/* The same for a given date and format. */
void dates_render(train_rng *rng, date_ymd d, dates_format format, date_pair *out);

/* Model B's vocabulary: four control tokens, then the 95 printable ASCII characters (so the
 * shipped model reads any ASCII; other characters become <unk>). */
enum {
    DATES_PAD = 0,
    DATES_BOS = 1,
    DATES_EOS = 2,
    DATES_UNK = 3,
    DATES_FIRST_CHAR = 4, /* ' ' (0x20); '~' (0x7E) is DATES_FIRST_CHAR + 94 */
    DATES_N_VOCAB = 99,
};

/* The token of one byte (DATES_UNK outside printable ASCII). */
int32_t dates_token(char c);
/* Every token's text ("<pad>", "<bos>", "<eos>", "<unk>", " ", "!", …) and GGUF token type
 * (3 control, 2 unknown, 1 normal) into caller-provided arrays; tokens[i] points into texts. */
void dates_vocab(char texts[DATES_N_VOCAB][8], const char *tokens[DATES_N_VOCAB], int32_t types[DATES_N_VOCAB]);

/* A pair as token ids: the source's characters (*n_src of them, at most DATES_MAX_SRC), the
 * decoder inputs <bos> + ISO and the targets ISO + <eos> (DATES_ISO_LEN + 1 each). */
void dates_encode_pair(const date_pair *p, int32_t *src, int32_t *n_src, int32_t tgt_in[DATES_ISO_LEN + 1],
                       int32_t tgt_out[DATES_ISO_LEN + 1]);

#endif

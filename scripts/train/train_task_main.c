/* train_task_main.c — the training sessions of session.h from the command line: the same
 * tasks, options and numbers as the JS library's train() (which runs the same C in wasm).
 *
 *   build/tools/train_task --task reverse|copy|dates|text [--text FILE] [--OPTION VALUE]…
 *                          [--eval-every N] [--print-every N] [--probe TEXT]
 *                          [--out MODEL.gguf [--type f32|f16|q8_0|q4_0]]
 *
 * OPTION is any option of sac_train_set (--embd 64, --min-len 4, …: '-' and '_' alike),
 * checked by the same code as the library's. Prints one CSV line per printed step:
 * step,loss,loss_bits (the float's bits in hex, to compare runs bit for bit), then
 * eval lines "eval,step,loss,exact". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file_io.h"
#include "progress.h"
#include "session.h"

static void usage(void) {
    fprintf(stderr,
            "usage: train_task --task reverse|copy|dates|text [--text FILE] [--OPTION VALUE]...\n"
            "                  [--eval-every N] [--print-every N] [--probe TEXT] [--out MODEL.gguf [--type q8_0]]\n"
            "  options: layers enc-layers dec-layers embd heads ff ctx batch steps lr min-lr warmup wd beta1\n"
            "           beta2 clip seed eval-seed threads val-n min-len max-len\n");
}

/* A whole number ≥ 0, or -1. */
static long parse_count(const char *s) {
    char *end;
    const long v = strtol(s, &end, 10);
    return *s && !*end && v >= 0 ? v : -1;
}

static void bits_line(long step, float loss) {
    uint32_t bits;
    memcpy(&bits, &loss, sizeof bits);
    printf("%ld,%.9g,%08x\n", step, loss, bits);
}

int main(int argc, char **argv) {
    const char *task = NULL, *text_path = NULL, *out = NULL, *type = "f32", *probe = NULL;
    long eval_every = 0, print_every = 1;
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--task")) task = argv[i + 1];
    sac_train *t = NULL;
    if (!task) return usage(), 1;
    if (sac_train_new(task, &t)) {
        fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
        sac_train_free(t);
        return 1;
    }
    int rc = 1;
    uint8_t *text = NULL, *bytes = NULL;
    for (int i = 1; i < argc; i += 2) {
        const char *name = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strncmp(name, "--", 2) || !value) {
            fprintf(stderr, "train_task: '%s' needs a value\n", name);
            goto done;
        }
        if (!strcmp(name, "--task")) continue;
        if (!strcmp(name, "--text")) text_path = value;
        else if (!strcmp(name, "--out")) out = value;
        else if (!strcmp(name, "--type")) type = value;
        else if (!strcmp(name, "--probe")) probe = value;
        else if (!strcmp(name, "--eval-every") || !strcmp(name, "--print-every")) {
            const long n = parse_count(value);
            if (n < 0 || (n == 0 && name[2] == 'p')) {
                fprintf(stderr, "train_task: %s must be a whole number%s, got '%s'\n", name,
                        name[2] == 'p' ? " ≥ 1" : "", value);
                goto done;
            }
            *(name[2] == 'e' ? &eval_every : &print_every) = n;
        } else {
            char key[64], *end;
            snprintf(key, sizeof key, "%s", name + 2);
            for (char *c = key; *c; c++)
                if (*c == '-') *c = '_';
            const double v = strtod(value, &end);
            if (!*value || *end) {
                fprintf(stderr, "train_task: %s wants a number, got '%s'\n", name, value);
                goto done;
            }
            if (sac_train_set(t, key, v)) {
                fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
                goto done;
            }
        }
    }
    if (text_path) {
        size_t size;
        if (!(text = read_file(text_path, &size))) {
            fprintf(stderr, "train_task: cannot read '%s'\n", text_path);
            goto done;
        }
        if (sac_train_set_text(t, (const char *)text, size)) {
            fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
            goto done;
        }
    }
    if (sac_train_start(t)) {
        fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
        goto done;
    }
    printf("# %s: %.0f parameters, %.0f steps, batch %.0f, %.0f threads\n", task, sac_train_get(t, "params"),
           sac_train_get(t, "steps"), sac_train_get(t, "batch"), sac_train_get(t, "threads"));
    const long steps = (long)sac_train_get(t, "steps");
    const double t0 = progress_wall_seconds(), cpu0 = progress_cpu_seconds();
    for (long s = 1; s <= steps; s++) {
        float loss;
        if (sac_train_step(t, &loss)) {
            fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
            goto done;
        }
        if (s % print_every == 0 || s == steps) bits_line(s, loss);
        if ((eval_every && s % eval_every == 0) || (eval_every && s == steps)) {
            float val, exact;
            if (sac_train_evaluate(t, &val, &exact)) {
                fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
                goto done;
            }
            printf("eval,%ld,%.9g,%.4f\n", s, val, exact);
        }
        fflush(stdout);
    }
    const double seconds = progress_wall_seconds() - t0, cpu = progress_cpu_seconds() - cpu0;
    const double tokens = sac_train_get(t, "tokens");
    /* per CPU-second too: on a shared machine, what the work itself cost */
    printf("# %.2f s, %.0f tokens/s; %.2f CPU s, %.0f tokens per CPU-second\n", seconds, tokens / (seconds > 0 ? seconds : 1),
           cpu, tokens / (cpu > 0 ? cpu : 1));
    if (probe) {
        if (sac_train_probe(t, probe, strlen(probe))) {
            fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
            goto done;
        }
        printf("probe '%s' → '%s' (%d × %d maps, %d layers × %d heads)\n", probe, sac_train_probe_output(t),
               sac_train_probe_dim(t, 3), sac_train_probe_dim(t, 4), sac_train_probe_dim(t, 1),
               sac_train_probe_dim(t, 2));
    }
    if (out) {
        size_t size;
        if (sac_train_export(t, type, NULL, &bytes, &size)) {
            fprintf(stderr, "train_task: %s\n", sac_train_errmsg(t));
            goto done;
        }
        if (!write_file(out, bytes, size)) {
            fprintf(stderr, "train_task: cannot write '%s'\n", out);
            goto done;
        }
        printf("# wrote %s (%zu bytes)\n", out, size);
    }
    rc = 0;
done:
    free(text);
    free(bytes);
    sac_train_free(t);
    return rc;
}

#!/usr/bin/env bash
# Native speed on GPT-2-small-shaped random models (768 wide, 12 layers, 12 heads, vocab 50257,
# context 1024) at F32, F16, Q8_0 and Q4_0, with 1 and 2 threads: prefill of 128 tokens and
# decode of 32 tokens after it, best of 3 runs each. A benchmark, not a test: compare the
# ratios in one run, absolute figures move 10-20% between runs on this kind of machine.
#
#   scripts/bench_native.sh [TYPES...]      e.g. scripts/bench_native.sh q8_0 q4_0
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build/saccade build/tools/make_model
dir=build/bench-models
mkdir -p "$dir"
types=("$@")
[ ${#types[@]} -gt 0 ] || types=(f32 f16 q8_0 q4_0)
printf '%-6s %8s %14s %14s %12s %12s %10s\n' type threads prefill_tok/s decode_tok/s ms/token weights_GB/s 2t/1t
for t in "${types[@]}"; do
  model="$dir/gpt2-small-$t.gguf"
  [ -f "$model" ] || build/tools/make_model "$model" --gpt2-small --type "$t"
  bytes=$(stat -c %s "$model")
  one=""
  for th in 1 2; do
    json=$(build/saccade bench "$model" --threads "$th" --prompt-tokens 128 --decode-tokens 32 --repeat 3)
    read -r pre dec < <(node -e 'const j=JSON.parse(process.argv[1]);console.log(j.prefill_tokens_per_s, j.decode_tokens_per_s)' "$json")
    ratio="-"
    [ -n "$one" ] && ratio=$(node -e "console.log(($dec/$one).toFixed(2))")
    [ -n "$one" ] || one=$dec
    node -e "const [t,th,p,d,b,r]=process.argv.slice(1);console.log(t.padEnd(6),th.padStart(8),(+p).toFixed(1).padStart(14),(+d).toFixed(1).padStart(14),(1000/d).toFixed(2).padStart(12),(b*d/1e9).toFixed(1).padStart(12),r.padStart(10))" \
      "$t" "$th" "$pre" "$dec" "$bytes" "$ratio"
  done
done
echo "weights_GB/s = file size x decode tokens/s: how close decode is to memory bandwidth (~26-35 GB/s here)."

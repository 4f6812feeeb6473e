// Chat test models: a small random llama whose character vocabulary also holds the special
// tokens of the common chat formats, with a chat template of our choosing, and the published
// templates of those formats (the shipped models have none; nothing is downloaded).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { addMetadata, llamaGguf } from './gguf.mjs';

const fixtureDir = fileURLToPath(new URL('../../build/js-fixtures', import.meta.url));

export const SPECIALS = ['<s>', '</s>', '<|im_start|>', '<|im_end|>', '<|begin_of_text|>', '<|start_header_id|>',
  '<|end_header_id|>', '<|eot_id|>', '<start_of_turn>', '<end_of_turn>', '<|user|>', '<|assistant|>', '<|system|>',
  '<|end|>', '<|endoftext|>'];

/** <unk>, the special tokens (control), '\n' and printable ASCII. */
export function chatVocabulary() {
  const tokens = ['<unk>', ...SPECIALS, '\n'];
  for (let c = 0x20; c < 0x7f; c++) tokens.push(String.fromCharCode(c));
  const types = tokens.map((t, i) => (i === 0 ? 2 : i <= SPECIALS.length ? 3 : 1));
  return { tokens, types };
}

export const tokenId = (text) => chatVocabulary().tokens.indexOf(text);

/**
 * A chat model file: { name, template (undefined: none), bos, eos (token texts), addBos, eot
 * (an id for tokenizer.ggml.eot_token_id), dir (default build/js-fixtures) }. Returns its path.
 */
export function chatModel({ name, template, bos = '<s>', eos = '</s>', addBos = false, eot, dir = fixtureDir }) {
  const { tokens, types } = chatVocabulary();
  const kvs = [
    ['tokenizer.ggml.model', 'string', 'char'],
    ['tokenizer.ggml.tokens', 'array', tokens, 'string'],
    ['tokenizer.ggml.token_type', 'array', types, 'i32'],
    ['tokenizer.ggml.unknown_token_id', 'u32', 0],
    ['tokenizer.ggml.bos_token_id', 'u32', tokenId(bos)],
    ['tokenizer.ggml.eos_token_id', 'u32', tokenId(eos)],
    ['tokenizer.ggml.add_bos_token', 'bool', addBos],
  ];
  if (template !== undefined) kvs.push(['tokenizer.chat_template', 'string', template]);
  if (eot !== undefined) kvs.push(['tokenizer.ggml.eot_token_id', 'u32', eot]);
  const bytes = addMetadata(llamaGguf({ vocab: tokens.length, ctx: 256 }), kvs);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `chat-${name}.gguf`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, bytes); // test files run in parallel: write, then rename
  renameSync(tmp, file);
  return file;
}

// The published chat templates of the formats the native CLI formats without Jinja, verbatim
// from each model's tokenizer_config.json (String.raw keeps their \n escapes, which Jinja reads).
export const TEMPLATES = {
  // teknium/OpenHermes-2.5-Mistral-7B (plain ChatML)
  chatml: String.raw`{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`,
  // Qwen/Qwen1.5-72B-Chat (ChatML with a system prompt of its own, as SmolLM2-Instruct's)
  qwen1_5: String.raw`{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}`,
  // Qwen/Qwen2.5-0.5B-Instruct (with tool calling, unused here)
  qwen2_5: String.raw`{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": <args-json-object>}}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
`,
  // meta-llama/Llama-2-7b-chat-hf
  llama2: String.raw`{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}`,
  // meta-llama/Meta-Llama-3-8B-Instruct
  llama3: String.raw`{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}`,
  // HuggingFaceH4/zephyr-7b-beta and TinyLlama/TinyLlama-1.1B-Chat-v1.0 (real newlines)
  zephyr: "{% for message in messages %}\n{% if message['role'] == 'user' %}\n{{ '<|user|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'system' %}\n{{ '<|system|>\n' + message['content'] + eos_token }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}",
  // google/gemma-7b-it and gemma-2b-it
  gemma: String.raw`{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}`,
  // microsoft/Phi-3-small-8k-instruct (real newlines)
  phi3: "{{ bos_token }}{% for message in messages %}{{'<|' + message['role'] + '|>' + '\n' + message['content'] + '<|end|>\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}",
};

/** Each format's special tokens as its models' vocabularies mark them. */
export const FAMILY_TOKENS = {
  chatml: { bos: '<|endoftext|>', eos: '<|im_end|>', addBos: false }, // Qwen2.5
  qwen1_5: { bos: '<|endoftext|>', eos: '<|im_end|>', addBos: false },
  qwen2_5: { bos: '<|endoftext|>', eos: '<|im_end|>', addBos: false },
  llama2: { bos: '<s>', eos: '</s>', addBos: true },
  llama3: { bos: '<|begin_of_text|>', eos: '<|eot_id|>', addBos: true },
  zephyr: { bos: '<s>', eos: '</s>', addBos: true }, // TinyLlama
  gemma: { bos: '<s>', eos: '</s>', addBos: true },
  phi3: { bos: '<s>', eos: '<|endoftext|>', addBos: false },
};

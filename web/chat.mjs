// The demo page's chat mode, for models whose file has a chat template: the conversation as
// turns above the prompt box, and every request the whole conversation plus the new user turn
// (the worker renders it with the template and generates the reply). The views show what the
// model read — every turn, as the template wrote it — so attention works on the conversation.
// When the conversation outgrows the context, the model leaves its oldest exchanges out
// (model.chat's dropOldest): they stay on the page, greyed, and are no longer sent.
//
// app.mjs calls: setModel(loaded) after a load; active; request(text) to send a turn; started(msg)
// on its 'start'; reply(text) for each streamed piece; finish(ok) when the generation ends; its
// UI is made here.

const STYLE = `
#chat-bar { display: flex; gap: 8px 14px; align-items: center; margin: 4px 0; }
#chat-turns { display: flex; flex-direction: column; gap: 6px; margin: 6px 0; max-height: 18em; overflow-y: auto; }
#chat-turns .turn { padding: 4px 8px; border-radius: 6px; white-space: pre-wrap; word-break: break-word; max-width: 90%; }
#chat-turns .turn::before { content: attr(data-role); display: block; font-size: 11px; color: var(--muted, #667085); }
#chat-turns .turn.user { align-self: flex-end; background: #e8f0fe; }
#chat-turns .turn.assistant { align-self: flex-start; background: #f2f4f7; }
#chat-turns .turn.system { align-self: center; background: #fef6e7; font-size: 0.9em; }
#chat-turns .turn.pending { opacity: 0.75; }
#chat-turns .turn.dropped { opacity: 0.45; border: 1px dashed #98a2b3; }
#chat-turns .turn.dropped::before { content: attr(data-role) ' — left out: no longer in the model\'s context'; }
`;

export class ChatMode {
  #bar;
  #turns;
  #prompt;
  #label;
  #toggle;
  #system;
  /** The committed turns the model still reads: [{ role, content }]. */
  messages = [];
  /** Turns a full context made the model leave out (model.chat's dropOldest), shown greyed. */
  dropped = [];
  #elements = new WeakMap(); // message -> its element
  #pending = null; // { before, user, reply, element, dropped } while a turn is generated

  /**
   * `bar` and `turns`: empty containers of the page; `prompt`/`label`: the prompt box and its
   * label; `onNew()`: "New chat" was pressed (the page clears what showed the old conversation).
   */
  constructor({ bar, turns, prompt, label, onNew }) {
    this.#bar = bar;
    this.#turns = turns;
    this.#prompt = prompt;
    this.#label = label;
    const style = document.createElement('style');
    style.textContent = STYLE;
    document.head.append(style);
    this.#toggle = Object.assign(document.createElement('input'), { type: 'checkbox', id: 'chat-mode' });
    this.#system = Object.assign(document.createElement('input'), {
      id: 'chat-system', type: 'text', size: 30, placeholder: 'system prompt (optional)',
    });
    const reset = Object.assign(document.createElement('button'), { type: 'button', id: 'chat-new', textContent: 'New chat' });
    const toggle = document.createElement('label');
    toggle.append(this.#toggle, ' chat (the model\'s chat template)');
    bar.replaceChildren(toggle, this.#system, reset);
    this.#toggle.addEventListener('change', () => this.#show());
    reset.addEventListener('click', () => {
      this.reset();
      onNew?.();
    });
    bar.hidden = true;
  }

  /** After a load: chat is offered when the file has a chat template (and on by default then). */
  setModel(loaded) {
    const offered = Boolean(loaded?.info.chatTemplate);
    this.#bar.hidden = !offered;
    this.#toggle.checked = offered;
    this.reset();
  }

  get active() {
    return !this.#bar.hidden && this.#toggle.checked;
  }

  reset() {
    this.messages = [];
    this.dropped = [];
    this.#pending = null;
    this.#turns.replaceChildren();
    this.#show();
  }

  #show() {
    const on = this.active;
    this.#turns.hidden = !on;
    this.#system.hidden = !on;
    this.#label.textContent = on ? 'Your message' : 'Prompt';
  }

  #turn(role, content, pending = false, dropped = false) {
    const el = document.createElement('div');
    el.className = `turn ${role}${pending ? ' pending' : ''}${dropped ? ' dropped' : ''}`;
    el.dataset.role = role;
    el.textContent = content;
    this.#turns.append(el);
    this.#turns.scrollTop = this.#turns.scrollHeight;
    return el;
  }

  /** The prompt for the worker: { messages } — the conversation and the user's new turn. */
  request(text) {
    if (text.trim() === '') throw new Error('type a message first');
    const system = this.#system.value.trim();
    const messages = [...this.messages];
    if (messages.length === 0 && system) { // the system prompt opens a new conversation
      messages.push({ role: 'system', content: system });
      this.#elements.set(messages[0], this.#turn('system', system, true));
    }
    const user = { role: 'user', content: text };
    const userElement = this.#turn('user', text, true);
    this.#pending = { before: messages, user, userElement, reply: '', element: this.#turn('assistant', '', true) };
    this.#prompt.value = '';
    return { messages: [...messages, user] };
  }

  /**
   * The turn's prompt is evaluated ('start'): `dropped` of the oldest messages after the system
   * ones did not fit in the context with it; the model reads the conversation without them.
   */
  started({ dropped = 0 }) {
    const p = this.#pending;
    if (!p || !dropped) return;
    let head = 0;
    while (head < p.before.length && p.before[head].role === 'system') head++;
    p.dropped = p.before.slice(head, head + dropped);
    p.before = [...p.before.slice(0, head), ...p.before.slice(head + dropped)];
    for (const m of p.dropped) this.#elements.get(m)?.classList.add('dropped');
  }

  /** A piece of the reply as it streams in (shown by drawReply). */
  reply(text) {
    if (this.#pending) this.#pending.reply += text;
  }

  /** Shows the reply so far: the page calls it when it draws the text (at its pace). */
  drawReply() {
    const p = this.#pending;
    if (!p || p.element.textContent === p.reply) return;
    p.element.textContent = p.reply;
    this.#turns.scrollTop = this.#turns.scrollHeight;
  }

  /** The turn ended: kept in the conversation when it succeeded, else taken back (the text returns to the box). */
  finish(ok) {
    this.drawReply();
    const p = this.#pending;
    if (!p) return;
    this.#pending = null;
    if (ok) {
      const reply = { role: 'assistant', content: p.reply };
      this.messages = [...p.before, p.user, reply];
      this.dropped.push(...(p.dropped ?? []));
      this.#elements.set(p.user, p.userElement).set(reply, p.element);
      for (const el of this.#turns.querySelectorAll('.pending')) el.classList.remove('pending');
    } else {
      this.#prompt.value = p.user.content;
      this.#turns.replaceChildren();
      const head = this.messages.findIndex((m) => m.role !== 'system');
      const system = head < 0 ? this.messages : this.messages.slice(0, head);
      const show = (m, dropped) => this.#elements.set(m, this.#turn(m.role, m.content, false, dropped));
      for (const m of system) show(m, false);
      for (const m of this.dropped) show(m, true);
      for (const m of this.messages.slice(system.length)) show(m, false);
    }
  }
}

/* The web table's page: opens a session with its credential (a signed link in the address's fragment, or
   Telegram's initData), draws every frame the server sends (Server-Sent Events), and sends the tokens of the
   buttons pressed. Everything the page shows comes from the server, already censored for its seat and in its
   language; names are set as text, never as markup. At /r/<table> the same drawing replays a finished match
   (replay.js drives it). */
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const CARD = /^(1[0-2]|[1-7])[oceb]$/;
  const state = { page: null, source: null, frame: null, picked: null, amount: 0, flashSeen: {}, timers: [] };
  // The table: the address's last part (/t/<table>), or, in a Mini App opened by its direct link at its
  // registered address (/t/ or /), the link's startapp that Telegram passes on (the server checks it in
  // initData's start_param, and answers with the table it opened).
  const path = location.pathname.split("/").filter(Boolean);
  let table = decodeURIComponent(path.length > 1 ? path[path.length - 1] : "") || startParam();

  function startParam() {
    const query = new URLSearchParams(location.search).get("tgWebAppStartParam");
    if (query) return query;
    const data = new URLSearchParams(location.hash.slice(1)).get("tgWebAppData");
    return (data && new URLSearchParams(data).get("start_param")) || "";
  }
  const replaying = location.pathname.startsWith("/r/");

  function credential() {
    const key = (replaying ? "mus-replay-" : "mus-credential-") + table;
    const hash = new URLSearchParams(location.hash.slice(1));
    let found = null;
    if (hash.get("k")) found = { link: hash.get("k") };
    else if (hash.get("tgWebAppData")) found = { init_data: hash.get("tgWebAppData") };
    if (found) {
      sessionStorage.setItem(key, JSON.stringify(found));
      history.replaceState(null, "", location.pathname + location.search); // the credential leaves the address
      return found;
    }
    const kept = sessionStorage.getItem(key);
    return kept ? JSON.parse(kept) : {};
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function card(name) {
    const slot = el("div", "slot");
    if (CARD.test(name)) slot.innerHTML = window.MusCards.svg(name); // (card art: no text from anyone)
    slot.dataset.card = name;
    return slot;
  }

  function toast(text, alert) {
    if (!text) return;
    const t = $("toast");
    t.textContent = text;
    t.className = alert ? "alert" : "";
    t.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { t.hidden = true; }, alert ? 4000 : 2200);
  }

  async function act(token) {
    if (!state.page || !token) return;
    try {
      const response = await fetch("/api/act", {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ page: state.page, token: token }),
      });
      if (response.status === 401) { reconnect(); return; }
      const body = await response.json();
      if (body.answer) toast(body.answer, body.alert);
    } catch (e) { reconnect(); }
  }

  async function open() {
    const body = Object.assign({ table: table, lang: navigator.language || "es" }, credential());
    let response;
    try {
      response = await fetch("/api/session", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
    } catch (e) { setTimeout(open, 1500); return; }
    const answer = await response.json().catch(() => ({}));
    if (!response.ok && response.status !== 403) { // the store or the server is not there yet: again
      $("banner").textContent = answer.error || "…";
      $("banner").hidden = false;
      setTimeout(open, 1500);
      return;
    }
    if (!response.ok) {
      $("banner").textContent = answer.error || "403";
      $("banner").hidden = false;
      $("banner").dataset.refused = "1";
      return;
    }
    state.page = answer.page;
    table = answer.table || table;
    $("banner").hidden = true;
    const source = new EventSource("/api/events?page=" + encodeURIComponent(state.page));
    state.source = source;
    source.onmessage = (event) => draw(JSON.parse(event.data));
    source.onerror = () => reconnect();
  }

  function reconnect() {
    if (state.source) { state.source.close(); state.source = null; }
    state.page = null;
    const texts = state.frame && state.frame.texts;
    $("banner").textContent = (texts && texts.reconnecting) || "…";
    $("banner").hidden = false;
    clearTimeout(reconnect.timer);
    reconnect.timer = setTimeout(open, 1000);
  }

  // Seats are drawn around the felt with the page's own seat at the bottom (a spectator: seat 0).
  function place(seat, me) {
    const turned = (seat - me + 4) % 4;
    return ["seat-bottom", "seat-right", "seat-top", "seat-left"][turned];
  }

  function drawSeats(f) {
    const me = f.seat === null || f.seat === undefined ? 0 : f.seat;
    f.seats.forEach((s, i) => {
      const box = $(place(i, me));
      box.textContent = "";
      box.className = "seat team" + (i % 2) + (s.turn ? " turn" : "");
      box.dataset.seat = i;
      box.appendChild(el("div", "name", s.name));
      const chips = el("div", "chips");
      if (s.mano) chips.appendChild(el("span", "chip", "M"));
      if (s.turn && f.turn && f.turn.due_in !== undefined) {
        const clock = el("span", "clock");
        clock.dataset.due = String(Date.now() + f.turn.due_in * 1000);
        chips.appendChild(clock);
      }
      box.appendChild(chips);
      if (s.free) box.appendChild(el("div", "free", s.free)); // a lobby's empty seat: who sits if nobody does
      if (s.join) box.appendChild(button("join", s.join));
      else box.appendChild(el("div", "said", s.said || ""));
    });
  }

  // A seña's ⚡ shows on the seat that made it (a rival's is tapped there), over its speech bubble for the
  // catch window: in the middle of the felt, two of them overlapped the page's own seat.
  function drawFlashes(f) {
    $("flashes").textContent = "";
    if (f.over) return;
    const me = f.seat === null || f.seat === undefined ? 0 : f.seat;
    (f.flashes || []).forEach((flash) => {
      const box = $(place(flash.seat, me));
      const key = f.hand + ":" + flash.index;
      if (!(key in state.flashSeen)) state.flashSeen[key] = Date.now() - (flash.age || 0) * 1000;
      const left = f.window * 1000 - (Date.now() - state.flashSeen[key]);
      if (left <= 0) return;
      // A rival's, to catch: a large button over the seat. Anyone else's (a partner's, one's own, or any for a
      // watcher): a small ⚡ in the seat's corner, that a seña was made there, nothing to tap.
      const button = flash.token ? el("button", "flash", flash.name) : el("span", "flash-made", "⚡");
      button.dataset.index = flash.index;
      if (flash.token) button.addEventListener("click", () => act(flash.token));
      box.appendChild(button);
      state.timers.push(setTimeout(() => button.remove(), left));
    });
  }

  // A button the server drew with its token (the chat's own): its code names it for styles and tests.
  function button(cls, b) {
    const node = el("button", cls, b.label);
    node.dataset.code = b.code || "";
    node.addEventListener("click", () => act(b.token));
    return node;
  }

  // The lobby: the chat lobby's options and controls this visitor may press (a watcher: none).
  function drawLobby(f) {
    const box = $("actions");
    const lobby = f.lobby;
    if (!lobby) return;
    box.appendChild(el("div", "options-line", lobby.options_line));
    const options = el("div", "options");
    lobby.options.forEach((b) => options.appendChild(button("option", b)));
    box.appendChild(options);
    const controls = el("div", "controls");
    lobby.controls.forEach((b) => controls.appendChild(button("control " + b.code, b)));
    box.appendChild(controls);
    box.appendChild(el("div", "hint", lobby.hint));
  }

  // After the match: a new lobby in the same chat, and the page follows it (with the credential the server
  // gives for that table: this person's, no longer-lived than the one they came with).
  function drawAgain(f, box) {
    if (!f.again) return;
    const b = el("button", "again", f.again.label);
    b.id = "again";
    b.addEventListener("click", newGame);
    box.appendChild(b);
  }

  async function newGame() {
    if (!state.page) return;
    try {
      const response = await fetch("/api/newgame", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ page: state.page }),
      });
      if (response.status === 401) { reconnect(); return; }
      const body = await response.json();
      if (!body.ok) { toast(body.answer, true); return; }
      sessionStorage.setItem("mus-credential-" + body.table, JSON.stringify({ link: body.link }));
      history.replaceState(null, "", "/t/" + encodeURIComponent(body.table));
      if (state.source) { state.source.close(); state.source = null; }
      table = body.table;
      state.page = null;
      state.frame = null;
      open();
    } catch (e) { reconnect(); }
  }

  function drawHand(f) {
    const hand = $("hand");
    hand.textContent = "";
    const discard = f.discard;
    (f.cards || []).forEach((name) => {
      const slot = card(name);
      if (discard && !discard.ready) {
        slot.classList.add("pickable");
        if (discard.picked.indexOf(name) >= 0) slot.classList.add("picked");
        slot.addEventListener("click", () => act(discard.picks[name]));
      } else if (discard && discard.picked.indexOf(name) >= 0) {
        slot.classList.add("picked");
      }
      hand.appendChild(slot);
    });
    $("summary").textContent = f.summary || "";
    const known = $("known");
    known.textContent = "";
    (f.known || []).forEach((line) => known.appendChild(el("li", null, line)));
  }

  function drawActions(f) {
    const box = $("actions");
    box.textContent = "";
    if (f.discard) {
      box.appendChild(el("div", "hint", f.discard.hint));
      if (f.discard.confirm && !f.discard.ready) {
        const b = el("button", "confirm", f.discard.confirm.label);
        b.id = "confirm-discard";
        b.addEventListener("click", () => act(f.discard.confirm.token));
        box.appendChild(b);
      }
    }
    const moves = f.moves;
    if (moves) {
      const row = el("div", "calls");
      moves.calls.forEach((c) => {
        const b = el("button", "call", c.label);
        b.dataset.code = c.code;
        b.addEventListener("click", () => act(c.token));
        row.appendChild(b);
      });
      box.appendChild(row);
      if (moves.amounts.length) {
        state.amount = Math.min(state.amount, moves.amounts.length - 1);
        const stepper = el("div", "stepper");
        const less = el("button", "less", "−");
        const more = el("button", "more", "+");
        const bet = el("button", "amount", moves.amounts[state.amount].label);
        bet.id = "bet";
        const show = () => {
          bet.textContent = moves.amounts[state.amount].label;
          less.disabled = state.amount === 0;
          more.disabled = state.amount === moves.amounts.length - 1;
        };
        less.addEventListener("click", () => { state.amount = Math.max(0, state.amount - 1); show(); });
        more.addEventListener("click", () => { state.amount = Math.min(moves.amounts.length - 1, state.amount + 1); show(); });
        bet.addEventListener("click", () => act(moves.amounts[state.amount].token));
        stepper.append(less, bet, more);
        show();
        box.appendChild(stepper);
      }
      if (moves.ordago) {
        const b = el("button", "ordago", moves.ordago.label);
        b.addEventListener("click", () => act(moves.ordago.token));
        box.appendChild(b);
      }
    } else {
      state.amount = 0;
    }
    (f.senas || []).forEach((s) => {
      const b = el("button", "sena", s.label);
      b.addEventListener("click", () => act(s.token));
      box.appendChild(b);
    });
  }

  function drawCount(f, previous) {
    const box = $("count");
    clearTimeout(drawCount.timer);
    box.hidden = !f.over;
    if (!f.over) return;
    if (previous && previous.hand === f.hand && !previous.over && f.pause) {
      // The hand just ended: the last answer is seen on the table first, then the count.
      box.hidden = true;
      drawCount.timer = setTimeout(() => { box.hidden = false; }, f.pause * 1000);
    }
    $("count-title").textContent = f.texts.the_count;
    const shown = $("shown");
    shown.textContent = "";
    (f.shown || []).forEach((cards, seat) => {
      const row = el("div", "row");
      row.appendChild(el("div", "who", f.seats[seat].name));
      cards.forEach((name) => row.appendChild(card(name)));
      shown.appendChild(row);
    });
    for (const [id, lines] of [["count-lines", f.count], ["results", f.results]]) {
      const list = $(id);
      list.textContent = "";
      (lines || []).forEach((line) => list.appendChild(el("li", null, line.trim())));
    }
    // The match is over: who won and "New game" go right under the felt, where they are seen without
    // scrolling past the count (with the count, after the last answer was seen).
    if (!f.again) return;
    const note = $("note");
    const reveal = () => {
      note.textContent = f.again.headline || "";
      drawAgain(f, note);
      note.hidden = false;
    };
    if (box.hidden) state.timers.push(setTimeout(reveal, f.pause * 1000));
    else reveal();
  }

  // A replay shows every seat's cards (a finished hand's are the chat's to see), under the seat's name.
  function drawHands(f) {
    const box = $("hands");
    box.textContent = "";
    box.hidden = !f.hands;
    (f.hands || []).forEach((seat, i) => {
      const row = el("div", "row team" + (i % 2));
      row.dataset.seat = i;
      row.appendChild(el("div", "who", seat.name));
      seat.cards.forEach((name) => row.appendChild(card(name)));
      box.appendChild(row);
    });
  }

  function drawStory(f, previous) {
    const list = $("story-lines");
    const before = previous && previous.hand === f.hand ? (previous.story || []) : [];
    list.textContent = "";
    // A page just opened (or reconnected) has seen nothing said yet: only what is said from then on lights up.
    const fresh = (line, i) => previous && before[i] !== line;
    f.story.forEach((line, i) => list.appendChild(el("li", fresh(line, i) ? "new" : null, line)));
  }

  function draw(f) {
    const previous = state.frame;
    for (const [key, none] of [["texts", {}], ["lang", "es"], ["window", 3], ["pause", 0]]) {
      if (f[key] === undefined) f[key] = previous && previous[key] !== undefined ? previous[key] : none; // sent once
    }
    state.frame = f;
    state.timers.forEach(clearTimeout);
    state.timers = [];
    document.documentElement.lang = (f.lang || document.documentElement.lang);
    document.body.dataset.hand = f.hand;
    document.body.dataset.k = f.k;
    document.body.dataset.live = f.live ? "1" : "0";
    document.body.dataset.spectator = f.spectator ? "1" : "0";
    $("title").textContent = f.title || "";
    $("rules").textContent = f.texts.rules || "";
    $("rules").href = "/rules/" + encodeURIComponent(f.lang || "es");
    $("teams").hidden = !f.teams;
    (f.teams || []).forEach((team, i) => {
      const box = $("team" + i);
      box.textContent = "";
      box.append(el("div", "names", team.names), el("div", "score", team.score), el("div", "record", team.record));
    });
    drawSeats(f);
    $("stage").textContent = f.stage || "";
    $("stake").textContent = f.stake || "";
    const note = $("note");
    note.hidden = !(f.note || f.spectator);
    note.textContent = f.note || (f.spectator ? f.texts.spectating : "");
    document.body.dataset.status = f.status || "";
    if (!f.title) { // a lobby, a cancelled or finished table: seats, the lobby's buttons, a note
      ["hand", "summary", "known", "actions", "story-lines", "flashes"].forEach((id) => { $(id).textContent = ""; });
      $("count").hidden = true;
      $("title").textContent = f.lobby ? f.lobby.heading : "";
      $("story").hidden = true;
      drawLobby(f);
      drawAgain(f, $("actions"));
      return;
    }
    $("story").hidden = false;
    drawFlashes(f);
    drawHand(f);
    drawActions(f);
    drawHands(f);
    drawCount(f, previous);
    drawStory(f, previous);
  }

  setInterval(() => {
    document.querySelectorAll(".clock").forEach((clock) => {
      const left = Math.max(0, Math.round((Number(clock.dataset.due) - Date.now()) / 1000));
      clock.textContent = "⏱ " + left + " s";
    });
  }, 250);

  window.MusTable = { table: table, credential: credential, draw: draw, toast: toast };
  document.addEventListener("DOMContentLoaded", () => (replaying ? window.MusReplay.start(window.MusTable) : open()));
})();

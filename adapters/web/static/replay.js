/* A finished match replayed on the table's own drawing (table.js): the server sends every frame of one kept
   hand at a time (POST /api/replay, with the link's credential each time: it keeps nothing per page), and
   this plays them a pause apart, the count at the hand's end, then the next hand. The controls go a hand or
   a move back and forth, and pause or play. */
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  // After a hand's count, the next hand comes this many pauses later.
  const LINGER = 5;
  const r = { ui: null, link: "", answer: null, at: 0, playing: true, timer: null };

  function refused(text, final) {
    const banner = $("banner");
    banner.textContent = text || "…";
    banner.hidden = false;
    if (final) banner.dataset.refused = "1";
  }

  async function load(hand) {
    clearTimeout(r.timer);
    const body = { table: r.ui.table, link: r.link, lang: navigator.language || "", hand: hand === undefined ? null : hand };
    let response;
    try {
      response = await fetch("/api/replay", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      });
    } catch (e) { refused("…"); r.timer = setTimeout(() => load(hand), 1500); return; }
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) {
      const final = response.status === 403 || response.status === 404;
      refused(answer.error || String(response.status), final);
      if (!final) r.timer = setTimeout(() => load(hand), 1500); // the store is not there yet: again
      return;
    }
    $("banner").hidden = true;
    r.answer = answer;
    show(0);
    schedule();
  }

  function show(i) {
    const a = r.answer;
    r.at = Math.max(0, Math.min(i, a.frames.length - 1));
    r.ui.draw(Object.assign({}, a.shared, a.frames[r.at]));
    controls();
  }

  function handIndex() { return r.answer.hands.indexOf(r.answer.hand); }

  function schedule() {
    clearTimeout(r.timer);
    if (!r.playing || !r.answer) return;
    const pause = r.answer.shared.pause * 1000;
    if (r.at < r.answer.frames.length - 1) {
      r.timer = setTimeout(() => { show(r.at + 1); schedule(); }, pause);
    } else if (handIndex() < r.answer.hands.length - 1) {
      r.timer = setTimeout(() => load(r.answer.hands[handIndex() + 1]), pause * LINGER);
    } else {
      r.playing = false; // the match's last count: the replay rests there
      controls();
    }
  }

  function controls() {
    const a = r.answer;
    const texts = a.shared.texts;
    const box = $("replay");
    box.hidden = false;
    box.dataset.hand = a.hand;
    box.dataset.at = r.at;
    box.dataset.total = a.frames.length - 1;
    box.dataset.playing = r.playing ? "1" : "0";
    $("replay-at").textContent = a.position + " · " + a.moves[r.at];
    const i = handIndex();
    const buttons = [
      ["replay-previous", texts.previous, i <= 0],
      ["replay-back", texts.back, r.at <= 0],
      ["replay-play", r.playing ? texts.pause : texts.play, false],
      ["replay-forward", texts.forward, r.at >= a.frames.length - 1],
      ["replay-next", texts.next, i >= a.hands.length - 1],
    ];
    for (const [id, name, off] of buttons) {
      const b = $(id);
      b.title = name;
      b.setAttribute("aria-label", name);
      b.disabled = off;
    }
    $("replay-play").textContent = r.playing ? "⏸️" : "▶️";
  }

  function hold() { r.playing = false; clearTimeout(r.timer); }

  function wire() {
    $("replay-previous").addEventListener("click", () => load(r.answer.hands[handIndex() - 1]));
    $("replay-next").addEventListener("click", () => load(r.answer.hands[handIndex() + 1]));
    $("replay-back").addEventListener("click", () => { hold(); show(r.at - 1); });
    $("replay-forward").addEventListener("click", () => { hold(); show(r.at + 1); });
    $("replay-play").addEventListener("click", () => {
      if (r.playing) { hold(); controls(); return; }
      r.playing = true;
      if (r.at >= r.answer.frames.length - 1 && handIndex() >= r.answer.hands.length - 1) {
        load(r.answer.hands[0]); // played to the end: from the start again
        return;
      }
      controls();
      schedule();
    });
  }

  function start(ui) {
    r.ui = ui;
    r.link = ui.credential().link || "";
    wire();
    load();
  }

  window.MusReplay = { start: start };
})();

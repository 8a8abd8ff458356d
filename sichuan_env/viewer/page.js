/* sichuan_env replay viewer: renders the engine's snapshots (no rules here). */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("replay-data").textContent);
  const STEPS = DATA.steps;
  const LAST = STEPS.length - 1;
  const SUIT_BASE = { m: 0x1f007, s: 0x1f010, p: 0x1f019 };
  const BACK = String.fromCodePoint(0x1f02b);
  const POS = ["bottom", "right", "top", "left"];
  const REL = ["", "next", "opposite", "previous"];
  const FATE = { m: "taken by a pong or kong", w: "won on", r: "robbed (added kong)" };
  const MELD = { pong: "pong", kong: "kong", concealed_kong: "concealed kong" };
  // visible text is ASCII (any Latin font draws it); the Chinese terms only go into tooltips
  const ZH = { exchange: "换三张", void: "定缺", wall_empty: "流局", mo: "摸切", shou: "手切" };
  const PHASE = {
    exchange: "exchange three (huan san zhang)",
    void: "declare a void suit (ding que)",
    turn: "turn",
    claim: "claim window",
    rob: "robbing window",
    over: "hand over",
  };
  const END = { three_won: "three players won", wall_empty: "wall empty (liu ju)", first_win: "first win" };
  const $ = (id) => document.getElementById(id);
  let cur = 0;
  let logItem = null;
  let view = DATA.view === null || DATA.view === undefined ? "all" : String(DATA.view);

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function isTile(t) {
    return typeof t === "string" && /^[1-9][mps]$/.test(t);
  }
  function tile(t, extra) {
    const e = el("span", "tile" + (extra ? " " + extra : ""));
    if (isTile(t)) {
      e.classList.add("suit-" + t[1]);
      e.append(el("span", "g", String.fromCodePoint(SUIT_BASE[t[1]] + Number(t[0]) - 1)));
    }
    e.append(el("span", "nt", t));
    e.title = t;
    return e;
  }
  function back() {
    const e = el("span", "tile back");
    e.append(el("span", "g", BACK), el("span", "nt", ""));
    e.title = "hidden";
    return e;
  }
  function signed(x) {
    return x > 0 ? "+" + x : String(x);
  }
  function seatName(s) {
    const v = view === "all" ? 0 : Number(view);
    const rel = REL[(s - v + 4) % 4];
    return "seat " + s + (view !== "all" && rel ? " (" + rel + ")" : "");
  }
  function ordinal(k) {
    return ["1st", "2nd", "3rd", "4th"][k] || k + 1 + "th";
  }
  function winText(w, k) {
    const on = w.tile === null ? "on the deal" : "on " + w.tile;
    const from = w.from === null ? "self-draw" : "from seat " + w.from;
    const extras = w.extras.length ? " + " + w.extras.join(", ") : "";
    const roots = w.roots ? ", " + w.roots + " root" + (w.roots > 1 ? "s" : "") : "";
    return "won " + ordinal(k) + " " + on + " (" + from + "): " + w.fan + " fan " + w.base + roots + extras + ", " + w.points + " pts";
  }

  // glyph support: draw a tile and an unassigned code point; identical pixels mean no font has it
  function glyphsWork() {
    try {
      const c = document.createElement("canvas");
      c.width = c.height = 32;
      const g = c.getContext("2d", { willReadFrequently: true });
      const draw = (ch) => {
        g.clearRect(0, 0, 32, 32);
        g.font = "24px sans-serif";
        g.fillText(ch, 2, 26);
        return g.getImageData(0, 0, 32, 32).data.join(",");
      };
      return draw(String.fromCodePoint(0x1f00b)) !== draw(String.fromCodePoint(0x1f0ff));
    } catch (e) {
      return false;
    }
  }

  // ---- skeleton: four seat panels, the log, the rules
  const seats = [];
  for (let s = 0; s < 4; s++) {
    const p = el("div", "seat");
    p.id = "seat-" + s;
    const head = el("div", "seat-head");
    const parts = {
      name: el("span", "name"),
      dealer: el("span", "badge dealer", "dealer"),
      void: el("span", "badge void"),
      act: el("span", "badge act", "to act"),
      score: el("span", "score"),
      delta: el("span", "delta"),
    };
    head.append(parts.name, parts.dealer, parts.void, parts.act, parts.score, parts.delta);
    parts.hand = el("div", "hand");
    parts.handText = el("div", "hand-text");
    parts.picks = el("div", "picks");
    parts.melds = el("div", "melds");
    parts.river = el("div", "river");
    parts.win = el("div", "win");
    p.append(head, parts.hand, parts.handText, parts.picks, parts.melds, parts.river, parts.win);
    $("table").append(p);
    seats.push({ panel: p, ...parts });
  }
  for (let i = 0; i < LAST; i++) {
    const next = STEPS[i].next;
    const li = el("li");
    const a = el("a", null, "seat " + next.seat + ": " + next.chosen);
    a.href = "#step=" + (i + 1);
    li.append(a);
    $("loglist").append(li);
  }
  for (const [k, v] of Object.entries(DATA.meta.rules)) {
    $("ruleslist").append(el("dt", null, k), el("dd", null, v === null ? "none" : String(v)));
  }
  $("slider").max = String(LAST);
  $("view").value = view;

  // ---- one step
  function renderSeat(snap, s) {
    const P = seats[s];
    const seat = snap.seats[s];
    const mine = view === "all" || Number(view) === s;
    const rot = view === "all" ? 0 : Number(view);
    P.panel.dataset.pos = POS[(s - rot + 4) % 4];
    P.panel.classList.toggle("acting", snap.to_act === s);
    P.panel.classList.toggle("won", seat.win !== null);
    P.name.textContent = seatName(s);
    P.dealer.hidden = DATA.meta.dealer !== s;
    const v = mine ? seat.void : seat.void_public;
    P.void.textContent = "void " + (v || (snap.phase === "void" || snap.phase === "exchange" ? "?" : "-"));
    P.act.hidden = snap.to_act !== s;
    P.score.textContent = signed(snap.scores[s]);
    P.score.className = "score " + (snap.scores[s] > 0 ? "pos" : snap.scores[s] < 0 ? "neg" : "");
    P.delta.textContent = snap.delta[s] ? "(" + signed(snap.delta[s]) + ")" : "";
    // hand: the drawn tile apart at the right
    const hand = [];
    let rest = seat.tiles;
    if (seat.drawn) {
      const k = rest.lastIndexOf(seat.drawn);
      rest = rest.slice(0, k).concat(rest.slice(k + 1));
    }
    if (mine) {
      for (const t of rest) hand.push(tile(t));
      if (seat.drawn) hand.push(tile(seat.drawn, "drawn"));
    } else {
      for (let i = 0; i < seat.tiles.length; i++) hand.push(back());
    }
    P.hand.replaceChildren(...hand);
    P.handText.textContent = mine ? seat.hand || "(no tiles)" : "(hidden: " + seat.tiles.length + " tiles)";
    P.picks.textContent = mine && seat.picks.length ? "passing: " + seat.picks.join(" ") : "";
    // melds
    const melds = seat.melds.map((m) => {
      const g = el("span", "meld " + m.kind);
      g.dataset.kind = m.kind;
      g.dataset.tile = m.tile;
      const n = m.kind === "pong" ? 3 : 4;
      for (let i = 0; i < n; i++) {
        g.append(m.kind === "concealed_kong" && (i === 0 || i === 3) ? back() : tile(m.tile));
      }
      let label = (m.added ? "added kong" : MELD[m.kind] || m.kind) + " " + m.tile;
      if (m.from !== null && m.from !== undefined) label += " from seat " + m.from;
      g.append(el("span", "meld-label", label));
      return g;
    });
    P.melds.replaceChildren(...melds);
    // river
    const river = seat.river.map(([t, fate, mo]) => {
      const e = tile(t, (mo === 1 ? "mo" : "") + (fate ? " fate-" + fate : ""));
      e.dataset.fate = fate || "live";
      e.dataset.mo = String(mo);
      e.title = t + (mo === 1 ? " · tsumogiri (mo qie " + ZH.mo + ")" : mo === 0 ? " · from the hand (shou qie " + ZH.shou + ")" : "") + (fate ? " · " + FATE[fate] : "");
      return e;
    });
    P.river.replaceChildren(...river);
    P.win.textContent = seat.win === null ? "" : winText(snap.wins[seat.win], seat.win);
  }

  function renderDecision(snap) {
    const box = $("decision");
    const parts = [el("h2", null, cur === LAST ? "End of the record" : "Decision " + (cur + 1))];
    const nx = snap.next;
    if (!nx) {
      parts.push(el("p", null, DATA.meta.over ? "The hand is over." : "The record stops before the hand is over."));
    } else if (view !== "all" && Number(view) !== nx.seat) {
      parts.push(el("p", null, "seat " + nx.seat + " decides (hidden in seat " + view + "'s view)"));
    } else {
      parts.push(el("p", "who", "seat " + nx.seat + " chooses among " + nx.legal.length + ":"));
      const ul = el("ul", "legal");
      for (const a of nx.legal) {
        const li = el("li", a === nx.chosen ? "chosen" : null, a);
        ul.append(li);
      }
      parts.push(ul);
      parts.push(el("p", "chosen-line", "chosen: " + nx.chosen));
      if (snap.agent) {
        const ag = snap.agent;
        const exact = DATA.agent && DATA.agent.exact;
        const h = el("p", "agent-head", "agent " + DATA.agent.name + (ag.first_pick ? " (first pick)" : "") + (ag.agrees ? ": agrees" : ": differs"));
        const ol = el("ol", "agent-top");
        for (const [a, p] of ag.top) {
          const li = el("li");
          const bar = el("span", "bar");
          bar.style.width = Math.round(Math.max(0, Math.min(1, p)) * 100) + "%";
          li.append(el("span", "act", a), el("span", "p", p.toFixed(2)), bar);
          ol.append(li);
        }
        parts.push(h, ol);
        if (!exact) parts.push(el("p", "note", "no action_probs: the agent's chosen action, shown as 1.0"));
      }
    }
    box.replaceChildren(...parts);
  }

  function renderResult(snap) {
    const box = $("result");
    const res = snap.result;
    box.hidden = !res;
    if (!res) return;
    const parts = [el("h2", null, "Result")];
    const end = el("p", null, "end: " + (END[res.end] || res.end) + " · next dealer: seat " + res.next_dealer);
    if (ZH[res.end]) end.title = ZH[res.end];
    parts.push(end);
    const t = el("table", "scores");
    const hr = el("tr");
    hr.append(el("th", null, ""), ...[0, 1, 2, 3].map((s) => el("th", null, "seat " + s)));
    const sr = el("tr", "final");
    sr.append(el("th", null, "scores"), ...res.scores.map((x) => el("td", x > 0 ? "pos" : x < 0 ? "neg" : "", signed(x))));
    t.append(hr, sr);
    parts.push(t);
    if (res.wins.length) {
      const ul = el("ul", "wins");
      res.wins.forEach((w, k) => ul.append(el("li", null, "seat " + w.seat + " " + winText(w, k))));
      parts.push(el("h3", null, "Wins"), ul);
    }
    if (res.payments && res.payments.length) {
      const pt = el("table", "payments");
      const h = el("tr");
      h.append(el("th", null, "#"), el("th", null, "move"), ...[0, 1, 2, 3].map((s) => el("th", null, "s" + s)));
      pt.append(h);
      for (const p of res.payments) {
        const r = el("tr");
        const a = el("a", null, String(p.action + 1));
        a.href = "#step=" + (p.action + 1);
        const c = el("td");
        c.append(a);
        r.append(c, el("td", null, "seat " + p.seat + " " + p.move), ...p.deltas.map((d) => el("td", d > 0 ? "pos" : d < 0 ? "neg" : "", d ? signed(d) : "")));
        pt.append(r);
      }
      parts.push(el("h3", null, "Payments"), pt);
    }
    if (res.settlement) {
      const st = res.settlement;
      const fmt = (xs) => (xs.length ? xs.map((s) => "seat " + s).join(", ") : "none");
      const head = el("h3", null, "Draw settlement (liu ju)");
      head.title = ZH.wall_empty;
      parts.push(head);
      parts.push(el("p", null, "flower pigs: " + fmt(st.flower_pigs) + " · tenpai: " + fmt(st.tenpai)));
      parts.push(el("p", null, "deltas: " + st.deltas.map(signed).join(" / ")));
    }
    box.replaceChildren(...parts);
  }

  function render(step) {
    cur = step;
    const snap = STEPS[step];
    for (let s = 0; s < 4; s++) renderSeat(snap, s);
    $("table").dataset.view = view;
    $("phase").textContent = PHASE[snap.phase] || snap.phase;
    $("phase").title = ZH[snap.phase] || "";
    $("wall").textContent = "wall: " + snap.wall + " left";
    $("lastmove").textContent = snap.last ? "seat " + snap.last.seat + ": " + snap.last.action : "after the deal";
    $("event").textContent = snap.event === "win" ? "win!" : snap.event === "kong" ? "kong!" : "";
    $("event").className = snap.event || "";
    const claim = $("claim");
    claim.replaceChildren();
    if (snap.claim) {
      claim.append(el("span", null, (snap.phase === "rob" ? "added kong by seat " : "discard of seat ") + snap.claim.from + ": "), tile(snap.claim.tile));
    }
    renderDecision(snap);
    renderResult(snap);
    $("slider").value = String(step);
    $("stepno").textContent = "step " + step + " / " + LAST;
    $("first").disabled = $("prev").disabled = step === 0;
    $("next").disabled = $("last").disabled = step === LAST;
    $("next-win").disabled = findEvent("win", 1) === null;
    $("next-kong").disabled = findEvent("kong", 1) === null;
    const item = step > 0 ? $("loglist").children[step - 1] : null;
    if (logItem !== item) {
      if (logItem) logItem.classList.remove("current");
      if (item) item.classList.add("current");
      logItem = item;
      requestAnimationFrame(scrollLog);
    }
    document.body.dataset.step = String(step);
  }

  // keep the current action in sight (read layout once per frame, not once per step)
  function scrollLog() {
    const box = $("log");
    if (!logItem) {
      box.scrollTop = 0;
      return;
    }
    const top = logItem.offsetTop;
    if (top < box.scrollTop || top > box.scrollTop + box.clientHeight - 30) {
      box.scrollTop = top - box.clientHeight / 2;
    }
  }

  function findEvent(kind, dir) {
    for (let k = cur + dir; k >= 0 && k <= LAST; k += dir) if (STEPS[k].event === kind) return k;
    return null;
  }

  // ---- the URL hash is the state: #step=N&view=S
  function parseHash() {
    const q = new URLSearchParams(location.hash.replace(/^#/, ""));
    let n = parseInt(q.get("step"), 10);
    if (!Number.isFinite(n)) n = 0;
    const v = q.get("view");
    if (v === "all" || ["0", "1", "2", "3"].includes(v)) view = v;
    return Math.max(0, Math.min(LAST, n));
  }
  function canonical(step) {
    return "#step=" + step + (view === "all" ? "" : "&view=" + view);
  }
  function go(step) {
    step = Math.max(0, Math.min(LAST, step));
    if (location.hash !== canonical(step)) history.replaceState(null, "", canonical(step));
    $("view").value = view;
    render(step);
  }
  function onHash() {
    go(parseHash());
  }

  $("first").addEventListener("click", () => go(0));
  $("prev").addEventListener("click", () => go(cur - 1));
  $("next").addEventListener("click", () => go(cur + 1));
  $("last").addEventListener("click", () => go(LAST));
  $("slider").addEventListener("input", (e) => go(Number(e.target.value)));
  $("next-win").addEventListener("click", () => {
    const k = findEvent("win", 1);
    if (k !== null) go(k);
  });
  $("next-kong").addEventListener("click", () => {
    const k = findEvent("kong", 1);
    if (k !== null) go(k);
  });
  $("view").addEventListener("change", (e) => {
    view = e.target.value;
    go(cur);
  });
  $("download").addEventListener("click", (e) => {
    const blob = new Blob([JSON.stringify(DATA.record, null, 1)], { type: "application/json" });
    e.currentTarget.href = URL.createObjectURL(blob);
  });
  $("tile-style").addEventListener("click", () => document.body.classList.toggle("glyphs"));
  document.addEventListener("keydown", (e) => {
    const tag = e.target && e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || e.ctrlKey || e.metaKey || e.altKey) return;
    const keys = {
      ArrowRight: () => go(cur + 1),
      ArrowLeft: () => go(cur - 1),
      Home: () => go(0),
      End: () => go(LAST),
      PageDown: () => go(cur + 10),
      PageUp: () => go(cur - 10),
      w: () => go(findEvent("win", 1) ?? cur),
      W: () => go(findEvent("win", -1) ?? cur),
      k: () => go(findEvent("kong", 1) ?? cur),
      K: () => go(findEvent("kong", -1) ?? cur),
      t: () => document.body.classList.toggle("glyphs"),
    };
    if (keys[e.key]) {
      keys[e.key]();
      e.preventDefault();
    }
  });
  window.addEventListener("hashchange", onHash);
  if (glyphsWork()) document.body.classList.add("glyphs");
  onHash();
})();

/* The 40 cards of the Spanish deck, drawn as SVG by this project: oros, copas, espadas, bastos; 1-7, sota (10),
   caballo (11), rey (12). The frame's breaks (pintas) tell the suit as on printed decks; in Mus a 3 counts as a
   king and a 2 as an ace, so those two carry a badge that says so. Cards are named as the engine names them:
   rank then suit letter ("12o", "3c", "1e", "7b"). */
"use strict";
(function () {
  const SUITS = {
    o: { color: "#b8860b", light: "#f4c430", breaks: 0 },
    c: { color: "#b0272f", light: "#e35d5d", breaks: 1 },
    e: { color: "#1f4e8c", light: "#7aa7d8", breaks: 2 },
    b: { color: "#2f6b2a", light: "#8a5a2b", breaks: 3 },
  };

  // Each pip in a unit box centred on 0,0 (about -1..1), scaled where it is placed.
  function pip(suit, x, y, s) {
    const k = SUITS[suit];
    let body;
    if (suit === "o") {
      body = `<circle r="1" fill="${k.light}" stroke="${k.color}" stroke-width=".16"/>` +
        `<circle r=".62" fill="none" stroke="${k.color}" stroke-width=".1"/>` +
        `<circle r=".22" fill="${k.color}"/>`;
    } else if (suit === "c") {
      body = `<path d="M-.8,-.95 H.8 C.8,-.1 .35,.2 .12,.25 V.62 H.45 L.55,.95 H-.55 L-.45,.62 H-.12 V.25 C-.35,.2 -.8,-.1 -.8,-.95 Z" ` +
        `fill="${k.light}" stroke="${k.color}" stroke-width=".12" stroke-linejoin="round"/>` +
        `<path d="M-.62,-.7 H.62" stroke="${k.color}" stroke-width=".1"/>`;
    } else if (suit === "e") {
      body = `<path d="M0,-1.05 L.16,-.7 V.45 H-.16 V-.7 Z" fill="${k.light}" stroke="${k.color}" stroke-width=".08"/>` +
        `<rect x="-.52" y=".42" width="1.04" height=".16" rx=".06" fill="${k.color}"/>` +
        `<rect x="-.09" y=".58" width=".18" height=".34" fill="${k.color}"/>` +
        `<circle cy="1" r=".13" fill="${k.color}"/>`;
    } else {
      body = `<path d="M-.22,1 L-.34,-.7 Q-.3,-1.05 0,-1.05 Q.3,-1.05 .34,-.7 L.22,1 Z" fill="${k.light}" stroke="${k.color}" stroke-width=".1"/>` +
        `<circle cx="-.3" cy="-.25" r=".12" fill="${k.color}"/><circle cx=".28" cy=".15" r=".12" fill="${k.color}"/>` +
        `<circle cx="-.24" cy=".55" r=".1" fill="${k.color}"/>`;
    }
    return `<g transform="translate(${x},${y}) scale(${s})">${body}</g>`;
  }

  const LAYOUTS = {
    1: [[50, 75]],
    2: [[50, 45], [50, 105]],
    3: [[50, 40], [50, 75], [50, 110]],
    4: [[33, 45], [67, 45], [33, 105], [67, 105]],
    5: [[33, 42], [67, 42], [50, 75], [33, 108], [67, 108]],
    6: [[33, 40], [67, 40], [33, 75], [67, 75], [33, 110], [67, 110]],
    7: [[33, 38], [67, 38], [50, 56], [33, 76], [67, 76], [33, 112], [67, 112]],
  };

  function figure(rank, suit) {
    const k = SUITS[suit];
    const robe = `<path d="M34,122 L40,78 Q50,70 60,78 L66,122 Z" fill="${k.light}" stroke="${k.color}" stroke-width="2"/>`;
    const head = `<circle cx="50" cy="62" r="10" fill="#f1d3b3" stroke="#6b4a2b" stroke-width="1.5"/>`;
    let extra = "";
    if (rank === 12) { // the king's crown
      extra = `<path d="M39,52 L41,42 L46,48 L50,39 L54,48 L59,42 L61,52 Z" fill="#f4c430" stroke="#8a6d0b" stroke-width="1.2"/>`;
    } else if (rank === 11) { // the knight's horse
      extra = `<path d="M26,124 Q24,100 36,94 L64,94 Q78,96 76,112 L72,124 Z" fill="#8a5a2b" opacity=".85"/>` +
        `<path d="M70,96 Q82,86 80,74 L74,72 Q72,84 64,92 Z" fill="#8a5a2b"/>`;
    } else { // the page's cap
      extra = `<path d="M40,56 Q50,44 60,56 Z" fill="${k.color}"/>`;
    }
    return extra + robe + head + pip(suit, rank === 11 ? 68 : 64, 96, 9);
  }

  function frame(suit) {
    const k = SUITS[suit];
    let out = `<rect x="6" y="6" width="88" height="138" rx="7" fill="none" stroke="${k.color}" stroke-width="2"/>`;
    for (let i = 0; i < k.breaks; i++) { // the pintas: breaks in the frame, top and bottom
      const x = 40 + i * 9;
      out += `<rect x="${x}" y="3" width="5" height="6" fill="#fffdf7"/><rect x="${x}" y="141" width="5" height="6" fill="#fffdf7"/>`;
    }
    return out;
  }

  function badge(rank) {
    // 8 reyes: the 3 is a king, the 2 an ace.
    if (rank !== 3 && rank !== 2) return "";
    const text = rank === 3 ? "=R" : "=A";
    return `<g class="eq"><rect x="8" y="124" width="34" height="20" rx="5" fill="#222"/>` +
      `<text x="25" y="139" font-size="14" font-weight="700" text-anchor="middle" fill="#fff">${text}</text></g>`;
  }

  /** The SVG markup of a card ("12o"), or of a card's back when name is empty. */
  function svg(name) {
    if (!name) {
      return `<svg viewBox="0 0 100 150" class="card back" role="img" aria-label="?">` +
        `<rect x="1" y="1" width="98" height="148" rx="9" fill="#7a1f2b" stroke="#3a0c12" stroke-width="2"/>` +
        `<rect x="10" y="10" width="80" height="130" rx="6" fill="none" stroke="#f4c430" stroke-width="2" stroke-dasharray="4 3"/></svg>`;
    }
    const rank = parseInt(name.slice(0, -1), 10);
    const suit = name.slice(-1);
    const k = SUITS[suit];
    const middle = rank <= 7 ? LAYOUTS[rank].map(([x, y]) => pip(suit, x, y, rank === 1 ? 24 : 11.5)).join("") : figure(rank, suit);
    return `<svg viewBox="0 0 100 150" class="card" role="img" aria-label="${name}">` +
      `<rect x="1" y="1" width="98" height="148" rx="9" fill="#fffdf7" stroke="#999" stroke-width="1.5"/>` +
      frame(suit) + middle +
      `<text x="11" y="31" font-size="26" font-weight="800" fill="${k.color}" font-family="Georgia, serif">${rank}</text>` +
      `<g transform="rotate(180 50 75)"><text x="11" y="31" font-size="26" font-weight="800" fill="${k.color}" font-family="Georgia, serif">${rank}</text></g>` +
      badge(rank) + `</svg>`;
  }

  window.MusCards = { svg: svg };
})();

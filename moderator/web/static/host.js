"use strict";
// The host's remote: the commands that fit now as buttons, with pickers for their names and values. A button
// sends the same sentence a player would say, through the same path as the keyboard and the microphones.
(function () {
  const M = window.Moderator;
  const token = new URLSearchParams(location.search).get("token") || "";
  let shown = {};

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(function ([k, v]) { node.setAttribute(k, v); });
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  async function send(room, text) {
    const answer = M.$("answer");
    answer.className = "answer";
    answer.textContent = "...";
    try {
      const response = await fetch("/api/command", {
        method: "POST",
        headers: { "Content-Type": "application/json", "Authorization": "Bearer " + token },
        body: JSON.stringify({ room: room, text: text }),
      });
      const body = await response.json();
      if (response.ok) {
        answer.className = "answer ok";
        const said = body.events.filter(function (e) { return e.type === "announce"; }).map(function (e) { return e.text; });
        answer.textContent = "\u2713 " + text + (said.length ? ": " + said.join(" ") : "");
      } else {
        answer.className = "answer refused";
        answer.textContent = "\u2717 " + text + ": " + (body.reason || body.error || response.status);
      }
    } catch (err) {
      answer.className = "answer refused";
      answer.textContent = "\u2717 " + text + ": the moderator cannot be reached";
    }
  }

  // One picker per slot: a select for one value, checkboxes for a list of players.
  function picker(part, view, room, form) {
    const members = form.anyone || !room ? view.players : view.rooms[room].members;
    if (part.type === "players") {
      const box = el("span", { "class": "pick-many", "data-slot": part.slot });
      members.forEach(function (name) {
        const label = el("label", {});
        const check = el("input", { type: "checkbox", value: name });
        label.append(check, " " + name);
        box.append(label);
      });
      return box;
    }
    const select = el("select", { "data-slot": part.slot, "aria-label": part.slot });
    let options = [];
    if (part.type === "player") {
      options = members.map(function (n) { return { say: n, label: n }; });
    } else if (part.type === "number") {
      const most = room ? view.rooms[room].members.length : view.players.length;
      for (let i = most; i >= 1; i--) { options.push({ say: String(i), label: String(i) }); }
    } else {
      options = view.choices[part.type] || [];
    }
    const leader = room ? view.rooms[room].leader : null;
    options.forEach(function (o) {
      const option = el("option", { value: o.say }, o.label);
      if (part.type === "room" && room && o.value === room) { option.selected = true; }
      if (part.slot === "leader" && o.say === leader) { option.selected = true; }
      select.append(option);
    });
    return select;
  }

  function sentence(row, parts) {
    const words = [];
    for (const part of parts) {
      if (part.words) { words.push(part.words); continue; }
      const node = row.querySelector('[data-slot="' + part.slot + '"]');
      if (part.type === "players") {
        const picked = Array.from(node.querySelectorAll("input:checked")).map(function (c) { return c.value; });
        if (!picked.length) { return null; }
        words.push(picked.join(" and "));
      } else {
        words.push(node.value);
      }
    }
    return words.join(" ");
  }

  function command(intent, view, room) {
    const form = view.forms[intent];
    const row = el("div", { "class": "command", "data-intent": intent });
    const button = el("button", { type: "button", "data-command": intent, "data-room": room || "" }, form.label);
    row.append(button);
    if (form.parts.some(function (p) { return p.slot; })) {  // the sentence it sends, with its pickers
      const said = el("span", { "class": "sentence" });
      form.parts.forEach(function (p) {
        said.append(p.slot ? picker(p, view, room, form) : el("span", { "class": "words" }, p.words));
      });
      row.append(said);
    }
    button.addEventListener("click", function () {
      const text = sentence(row, form.parts);
      if (text === null) {
        M.$("answer").className = "answer refused";
        M.$("answer").textContent = "Pick at least one player first.";
        return;
      }
      send(room, text);
    });
    return row;
  }

  // Rebuilt only when what it shows changes, so a picker keeps its choice while the clock ticks.
  function commands(box, key, intents, view, room) {
    const signature = JSON.stringify([intents, room ? view.rooms[room].members : view.players, view.players,
      room ? view.rooms[room].leader : null]);
    if (shown[key] === signature) { return; }
    shown[key] = signature;
    box.replaceChildren.apply(box, intents.map(function (i) { return command(i, view, room); }));
  }

  function rooms(view) {
    document.querySelectorAll(".room-panel").forEach(function (panel) {
      const room = panel.dataset.room;
      const r = view.rooms[room];
      panel.querySelector(".leader").textContent = r.leader || "none yet";
      panel.querySelector(".due").textContent = view.round ? String(r.hostages_due) : "-";
      panel.querySelector(".locked").textContent = r.pending ? "waiting for yes: " + r.pending.join(", ") : M.names(r.hostages);
      panel.querySelector(".members").textContent = r.members.join(", ");
      panel.querySelector(".said").textContent = r.said ? "\u201c" + r.said + "\u201d" : "";
      commands(panel.querySelector(".commands"), room, r.commands, view, room);
    });
  }

  function refusals(view) {
    const list = M.$("refusals");
    const signature = JSON.stringify(view.refusals);
    if (shown.refusals === signature) { return; }
    shown.refusals = signature;
    list.replaceChildren.apply(list, view.refusals.map(function (r) {
      const item = el("li", {});
      item.append(el("b", {}, (r.room === "both" ? "" : r.room + ": ") + r.text), " \u2014 " + r.reason);
      return item;
    }));
  }

  // What the host must know besides the rooms: a failed speaker or microphone, a save that fails.
  function alerts(view) {
    const signature = JSON.stringify(view.alerts);
    if (shown.alerts === signature) { return; }
    shown.alerts = signature;
    const list = M.$("alerts");
    list.replaceChildren.apply(list, view.alerts.map(function (a) { return el("li", {}, "\u26a0 " + a); }));
  }

  function deck(view) {
    const signature = JSON.stringify(view.deck);
    if (shown.deck === signature) { return; }
    shown.deck = signature;
    const d = view.deck;
    const total = d.cards.reduce(function (n, c) { return n + c.count; }, 0);
    M.setText("deck-note", d.players + " players, " + total + " cards. " + d.dealing.join(" "));
    M.$("deck").tBodies[0].replaceChildren.apply(M.$("deck").tBodies[0], d.cards.map(function (c) {
      const row = el("tr", { "class": "team-" + c.team.toLowerCase() });
      row.append(el("td", {}, String(c.count)), el("td", {}, c.name), el("td", {}, c.team));
      return row;
    }));
  }

  M.$("say-form").addEventListener("submit", function (e) {
    e.preventDefault();
    const text = M.$("say-text").value.trim();
    if (text) { send(M.$("say-room").value || null, text); M.$("say-text").value = ""; }
  });

  M.connect(function (view) {
    M.setText("status", M.status(view));
    M.setText("headline", view.headline);
    alerts(view);
    commands(M.$("game-commands"), "game", view.commands, view, null);
    rooms(view);
    refusals(view);
    deck(view);
  });
})();

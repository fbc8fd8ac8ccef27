"use strict";
// Shared by the room and host pages: the live view over server-sent events, and the round clock drawn locally
// between views (the server sends the time left at least once a second; the page counts down in between).
window.Moderator = (function () {
  let view = null;
  let received = 0;

  function $(id) { return document.getElementById(id); }

  function setText(id, text) {
    const el = $(id);
    if (el && el.textContent !== text) { el.textContent = text; }
  }

  function left() {
    if (!view || view.clock.left === null) { return null; }
    const gone = view.clock.running ? (performance.now() - received) / 1000 : 0;
    return Math.max(0, view.clock.left - gone);
  }

  function clockText(seconds) {
    if (seconds === null) { return "--:--"; }
    const whole = Math.ceil(seconds - 0.001);
    return Math.floor(whole / 60) + ":" + String(whole % 60).padStart(2, "0");
  }

  const PHASES = { setup: "SETTING UP", briefing: "BRIEFING", round: "RUNNING", hostages: "TIME'S UP",
    parley: "PARLEY", exchange: "EXCHANGE", game_over: "GAME OVER", prediction: "PREDICTION", reveal: "REVEAL",
    result: "RESULT" };

  function status(v) {
    if (v.winner) { return v.winner.toUpperCase() + " WINS"; }
    if (v.paused) { return "PAUSED"; }
    return PHASES[v.phase] || v.phase.toUpperCase();
  }

  function drawClock() {
    const seconds = left();
    setText("clock", clockText(seconds));
    const arc = $("arc");
    if (arc && view) {
      const total = view.clock.seconds || 1;
      const share = seconds === null ? 0 : Math.min(1, seconds / total);
      const length = 2 * Math.PI * 90;
      arc.style.strokeDasharray = (share * length).toFixed(1) + " " + length.toFixed(1);
    }
    document.body.classList.toggle("last-ten", seconds !== null && seconds <= 10 && view.clock.running);
  }

  function connect(onView) {
    const source = new EventSource("/api/events");
    source.addEventListener("view", function (e) {
      view = JSON.parse(e.data);
      received = performance.now();
      document.body.classList.toggle("paused", view.paused);
      document.body.classList.remove("offline");
      setText("link", "live");
      onView(view);
      drawClock();
    });
    source.onerror = function () {
      document.body.classList.add("offline");
      setText("link", "reconnecting...");
    };
    setInterval(drawClock, 200);
    return source;
  }

  function names(list) {
    if (list === null || list === undefined) { return "not yet"; }
    return list.length ? list.join(", ") : "none";
  }

  return { $: $, setText: setText, connect: connect, status: status, names: names, clockText: clockText };
})();

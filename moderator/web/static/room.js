"use strict";
// A room's page: read-only, for a phone or a TV across the room.
(function () {
  const M = window.Moderator;
  const room = location.pathname.split("/").pop();
  document.title = "Room " + room;
  M.setText("room-name", "Room " + room);

  M.connect(function (view) {
    const r = view.rooms[room];
    M.setText("status", M.status(view));
    M.setText("headline", view.headline);
    M.setText("leader", r.leader || "none yet");
    M.setText("due", view.round ? String(r.hostages_due) : "-");
    M.setText("locked", r.pending ? "waiting for yes: " + r.pending.join(", ") : M.names(r.hostages));
    M.setText("said", r.said || "");
    M.setText("members", r.members.join(", "));
  });
})();

// foxden Space: the toolbar button opens the Space tab; the badge says the sandbox has no network.
// Firefox runs this as an event page (background.scripts), Chromium as a service worker.
const api = globalThis.browser ?? globalThis.chrome;

const BADGE_TEXT = "Network: off";

function setBadge() {
  api.action.setBadgeText({ text: BADGE_TEXT });
  api.action.setBadgeBackgroundColor({ color: "#2e6b30" });
  api.action.setTitle({ title: `foxden Space: open the Python sandbox (${BADGE_TEXT})` });
}

/** Opens a new Space tab (what the toolbar button does). */
function openSpace() {
  return api.tabs.create({ url: api.runtime.getURL("space.html") });
}

api.action.onClicked.addListener(() => {
  openSpace();
});
api.runtime.onInstalled.addListener(setBadge);
api.runtime.onStartup.addListener(setBadge);
setBadge();

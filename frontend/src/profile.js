/**
 * The Nsight Compute report of an accepted GPU run: asked for from the result, run on the slice's
 * profile lane after the verdict (never in front of anyone's), and read back from the stored result.
 */

import { eventSentence } from "./format.js";

const POLL_MS = 2000;
const POLL_FOR_MS = 120000;

/** Whether a stored result can have a profile: accepted, and measured on a GPU. */
export function profilable(result) {
  return Boolean(result) && result.verdict === "accepted" && result.backend === "cuda";
}

/** The sentence for a profile document: queued, or the report's own words. */
export function profileWords(profile) {
  if (!profile) return "";
  if (profile.state === "queued") return "Nsight Compute report: queued on the profile lane; it appears here when done.";
  return eventSentence({ type: "profile", ...profile });
}

export class ProfilePanel {
  /** @param {HTMLElement} box  where the button and the report go; `api` has profile(id) and submission(id). */
  constructor(box, api) {
    this.box = box;
    this.api = api;
    this.timer = null;
  }

  clear() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.box) this.box.replaceChildren();
  }

  show(id, result) {
    this.clear();
    if (!this.box || !profilable(result)) return;
    const profile = result.profile;
    if (!profile) {
      const button = document.createElement("button");
      button.type = "button";
      button.id = "profile-request";
      button.textContent = "Profile with Nsight Compute";
      button.addEventListener("click", () => this.request(id));
      this.box.append(button);
      return;
    }
    this.say(profileWords(profile));
    if (profile.state === "queued") this.poll(id, Date.now() + POLL_FOR_MS);
  }

  say(text) {
    const p = document.createElement("p");
    p.className = "profile-report";
    p.textContent = text;
    this.box.replaceChildren(p);
  }

  async request(id) {
    const reply = await this.api.profile(id);
    if (!reply.ok) {
      this.say(reply.error);
      return;
    }
    this.say(profileWords(reply.body.profile));
    this.poll(id, Date.now() + POLL_FOR_MS);
  }

  poll(id, until) {
    this.timer = setTimeout(async () => {
      const reply = await this.api.submission(id);
      const profile = reply.ok && reply.body.result ? reply.body.result.profile : null;
      if (profile && profile.state !== "queued") {
        this.say(profileWords(profile));
      } else if (Date.now() < until) {
        this.poll(id, until);
      }
    }, POLL_MS);
  }
}

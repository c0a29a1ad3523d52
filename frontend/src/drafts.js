/**
 * Per-exercise, per-language drafts: in this browser's localStorage at once, so switching language or
 * reloading never loses what the learner typed, and on the server (debounced), so the editor opens on
 * them in any browser. Storage failures (private mode, quota) degrade to "no draft", never to an exception.
 *
 * This browser's copy is stored with the server's `saved_at` of the version it last matched (`savedAt`) and
 * whether it has changed since (`dirty`); `chooseDraft` decides on load which copy the editor opens on.
 */

export function draftKey(slug, language) {
  return `warplab:draft:${slug}:${language}`;
}

/** A stored value as {source, savedAt, dirty}; a plain string is an older page's draft, never synced. */
export function readRecord(raw) {
  if (raw === null || raw === undefined) return null;
  try {
    const record = JSON.parse(raw);
    if (record && record.v === 2 && typeof record.source === "string") {
      return { source: record.source, savedAt: record.savedAt || null, dirty: Boolean(record.dirty) };
    }
  } catch (_err) {
    // not JSON: an older page's plain text
  }
  return { source: String(raw), savedAt: null, dirty: true };
}

export class Drafts {
  constructor(slug, storage = safeStorage()) {
    this.slug = slug;
    this.storage = storage;
  }

  record(language) {
    try {
      return this.storage ? readRecord(this.storage.getItem(draftKey(this.slug, language))) : null;
    } catch (_err) {
      return null;
    }
  }

  load(language) {
    const record = this.record(language);
    return record ? record.source : null;
  }

  /** What the learner typed: changed since the server's copy `savedAt` (kept from before unless given). */
  save(language, text) {
    const before = this.record(language);
    if (before && before.source === text) return;
    this.write(language, { source: text, savedAt: before ? before.savedAt : null, dirty: true });
  }

  /** The server now holds `text` as of `savedAt`; a later edit (the text differs now) stays unsaved. */
  synced(language, text, savedAt) {
    const now = this.record(language);
    if (now && now.source !== text) {
      this.write(language, { ...now, savedAt });
      return;
    }
    this.write(language, { source: text, savedAt, dirty: false });
  }

  write(language, { source, savedAt, dirty }) {
    try {
      if (this.storage) {
        this.storage.setItem(draftKey(this.slug, language), JSON.stringify({ v: 2, source, savedAt, dirty }));
      }
    } catch (_err) {
      // Full or disabled storage: the editor and the server still hold the text.
    }
  }
}

/**
 * Which copy of a draft the editor opens on: this browser's (`local`: {source, savedAt, dirty}) or the
 * server's (`server`: {source, saved_at}), either possibly null. The server's wins unless this browser's
 * holds edits made on top of exactly the server's copy (then it is sent to the server: `push`). The copy
 * that loses is returned in `keep`, with a note, so the history of kept drafts still has it.
 */
export function chooseDraft(local, server, starter = "") {
  const worth = (text) => typeof text === "string" && text.trim() !== "" && text !== starter;
  if (!server) {
    if (!local) return { source: null, push: false, keep: null };
    return { source: local.source, push: local.dirty && worth(local.source), keep: null };
  }
  if (!local || local.source === server.source) {
    return { source: server.source, push: false, keep: null, savedAt: server.saved_at };
  }
  if (local.dirty && local.savedAt === server.saved_at) {
    return { source: local.source, push: true, keep: null };
  }
  const keep = worth(local.source) ? { source: local.source, note: "this browser's copy" } : null;
  return { source: server.source, push: false, keep, savedAt: server.saved_at };
}

const MAX_KEPT = 10;

export function keptKey(slug) {
  return `warplab:kept:${slug}`;
}

/**
 * Drafts set aside when the editor is overwritten (restoring a past submission, resetting to the
 * starter): newest first, at most ten, so what the learner typed is never lost.
 */
export class KeptDrafts {
  constructor(slug, storage = safeStorage()) {
    this.key = keptKey(slug);
    this.storage = storage;
  }

  list() {
    try {
      const items = JSON.parse((this.storage && this.storage.getItem(this.key)) || "[]");
      return Array.isArray(items) ? items.filter((k) => k && typeof k.source === "string") : [];
    } catch (_err) {
      return [];
    }
  }

  /** Keeps `source` unless it is the newest kept one already; returns the list. */
  keep(language, source, note, now = new Date()) {
    const items = this.list();
    if (items.length && items[0].source === source && items[0].language === language) return items;
    items.unshift({ language, source, note, at: now.toISOString() });
    try {
      if (this.storage) this.storage.setItem(this.key, JSON.stringify(items.slice(0, MAX_KEPT)));
    } catch (_err) {
      // Full storage: the newest kept draft is still in memory for this page.
    }
    return items.slice(0, MAX_KEPT);
  }
}

function safeStorage() {
  try {
    return globalThis.localStorage || null;
  } catch (_err) {
    return null;
  }
}

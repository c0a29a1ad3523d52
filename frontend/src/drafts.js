/**
 * Per-exercise, per-language drafts in localStorage, so switching language or
 * reloading the page never loses what the learner typed. Storage failures
 * (private mode, quota) degrade to "no draft", never to an exception.
 */

export function draftKey(slug, language) {
  return `warplab:draft:${slug}:${language}`;
}

export class Drafts {
  constructor(slug, storage = safeStorage()) {
    this.slug = slug;
    this.storage = storage;
  }

  load(language) {
    try {
      return this.storage ? this.storage.getItem(draftKey(this.slug, language)) : null;
    } catch (_err) {
      return null;
    }
  }

  save(language, text) {
    try {
      if (this.storage) this.storage.setItem(draftKey(this.slug, language), text);
    } catch (_err) {
      // Full or disabled storage: the editor still holds the text.
    }
  }
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

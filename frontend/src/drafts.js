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

function safeStorage() {
  try {
    return globalThis.localStorage || null;
  } catch (_err) {
    return null;
  }
}

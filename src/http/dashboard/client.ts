/**
 * The dashboard's browser script (plain JS, no framework), inlined with a
 * CSP nonce. It reads the server-embedded state, renders keys and usage,
 * and calls /auth/keys and /auth/logout with fetch. Text goes through
 * textContent only, never innerHTML, so names cannot inject markup.
 */
export const DASHBOARD_SCRIPT = String.raw`
(() => {
  'use strict';
  const state = JSON.parse(document.getElementById('state').textContent);
  const $ = (id) => document.getElementById(id);
  const el = (tag, props, ...children) => {
    const n = document.createElement(tag);
    Object.assign(n, props || {});
    for (const c of children) n.append(c);
    return n;
  };
  const fmt = (iso) => (iso ? new Date(iso).toLocaleString() : 'never');

  async function api(method, path, body) {
    const res = await fetch(path, {
      method,
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
      credentials: 'same-origin',
    });
    const data = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(data.error || ('HTTP ' + res.status));
    return data;
  }

  function showSecret(secret, title) {
    const box = $('secret-box');
    box.replaceChildren(
      el('strong', { textContent: title }),
      el('div', { className: 'muted', textContent: 'Copy it now: it is shown only once and cannot be recovered.' }),
      el('code', { id: 'secret-value', textContent: secret }),
    );
    const copy = el('button', { id: 'copy-secret', type: 'button', textContent: 'Copy' });
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(secret);
        copy.textContent = 'Copied';
      } catch {
        const range = document.createRange();
        range.selectNodeContents($('secret-value'));
        const sel = getSelection();
        sel.removeAllRanges();
        sel.addRange(range);
        copy.textContent = 'Press Ctrl+C to copy';
      }
    });
    box.append(copy);
    box.hidden = false;
  }

  function renderKeys(keys) {
    const body = $('keys-body');
    body.replaceChildren();
    if (keys.length === 0) {
      body.append(el('tr', {}, el('td', { colSpan: 6, className: 'muted', textContent: 'No keys yet.' })));
      return;
    }
    for (const k of keys) {
      const status = el('span', { className: 'badge ' + (k.status === 'revoked' ? 'revoked' : k.tier), textContent: k.status === 'revoked' ? 'revoked' : k.tier });
      const action = el('td');
      if (k.status === 'active') {
        const b = el('button', { className: 'danger', type: 'button', textContent: 'Revoke' });
        b.dataset.keyId = k.id;
        b.addEventListener('click', () => confirmRevoke(k));
        action.append(b);
      }
      const row = el('tr', {}, el('td', {}, el('code', { textContent: k.prefix + '…' })), el('td', { textContent: k.name }), el('td', {}, status),
        el('td', { textContent: fmt(k.created_at) }), el('td', { textContent: fmt(k.last_used_at) }), action);
      row.dataset.keyId = k.id;
      row.dataset.status = k.status;
      body.append(row);
    }
  }

  function confirmRevoke(k) {
    const dlg = $('revoke-dialog');
    $('revoke-name').textContent = k.name + ' (' + k.prefix + '…)';
    $('revoke-error').textContent = '';
    dlg.dataset.keyId = k.id;
    dlg.showModal();
  }

  async function refresh() {
    const [keys, usage] = await Promise.all([api('GET', '/auth/keys'), api('GET', '/auth/usage')]);
    renderKeys(keys.keys);
    renderUsage(usage);
  }

  function renderUsage(usage) {
    $('stat-hour').textContent = usage.totals.last_hour;
    $('stat-day').textContent = usage.totals.last_24h;
    $('stat-month').textContent = usage.totals.last_30d;
    const hours = (usage.keys[0] ? usage.keys[0].per_hour : []).map((b, i) => ({
      start: b.start,
      count: usage.keys.reduce((a, k) => a + k.per_hour[i].count, 0),
    }));
    const svg = $('chart');
    const NS = 'http://www.w3.org/2000/svg';
    svg.replaceChildren();
    const max = Math.max(1, ...hours.map((h) => h.count));
    const w = 960 / Math.max(1, hours.length);
    hours.forEach((h, i) => {
      const height = Math.round((h.count / max) * 110);
      const r = document.createElementNS(NS, 'rect');
      r.setAttribute('x', String(i * w + 2));
      r.setAttribute('y', String(120 - height));
      r.setAttribute('width', String(w - 4));
      r.setAttribute('height', String(height));
      const t = document.createElementNS(NS, 'title');
      t.textContent = new Date(h.start).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) + ': ' + h.count + ' requests';
      r.append(t);
      svg.append(r);
      if (i % 4 === 0) {
        const label = document.createElementNS(NS, 'text');
        label.setAttribute('x', String(i * w + 2));
        label.setAttribute('y', '136');
        label.textContent = new Date(h.start).toLocaleTimeString([], { hour: '2-digit' });
        svg.append(label);
      }
    });
  }

  $('create-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const name = $('key-name').value.trim();
    $('create-error').textContent = '';
    $('create-button').disabled = true;
    try {
      const created = await api('POST', '/auth/keys', name ? { name } : {});
      $('key-name').value = '';
      showSecret(created.key, 'New key "' + created.name + '"');
      await refresh();
    } catch (err) {
      $('create-error').textContent = err.message;
    } finally {
      $('create-button').disabled = false;
    }
  });

  $('revoke-cancel').addEventListener('click', () => $('revoke-dialog').close());
  $('revoke-confirm').addEventListener('click', async () => {
    const dlg = $('revoke-dialog');
    try {
      await api('DELETE', '/auth/keys/' + encodeURIComponent(dlg.dataset.keyId));
      dlg.close();
      await refresh();
    } catch (err) {
      $('revoke-error').textContent = err.message;
    }
  });

  $('sign-out').addEventListener('click', async () => {
    await api('POST', '/auth/logout').catch(() => {});
    location.assign('/dashboard');
  });

  renderKeys(state.keys);
  renderUsage(state.usage);
  if (state.revealed) showSecret(state.revealed, 'Your first API key');
})();
`;

import './app.css';
import { mount } from 'svelte';
import App from './components/views/App.svelte';
import { getBackend, type Backend } from './lib/backend';

// `?mock` runs the UI against in-memory demo data, in a plain browser, at the time its audit
// data was recorded.
async function pickBackend(): Promise<{ backend: Backend; clock?: () => number }> {
  if (!new URLSearchParams(location.search).has('mock')) return { backend: getBackend() };
  const { demoBackend, demoClock } = await import('./lib/demo');
  return { backend: demoBackend(), clock: demoClock };
}

const TABS = ['approvals', 'policies', 'audit', 'servers', 'settings'] as const;
type Tab = (typeof TABS)[number];

// `?tab=audit` opens the window on a tab (for a tray menu entry, say).
const asked = new URLSearchParams(location.search).get('tab');
const initialTab: Tab = (TABS as readonly string[]).includes(asked ?? '') ? (asked as Tab) : 'approvals';

const { backend, clock } = await pickBackend();
mount(App, { target: document.getElementById('app')!, props: { backend, initialTab, clock } });

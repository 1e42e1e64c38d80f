import './app.css';
import { mount } from 'svelte';
import Prompt from './components/views/Prompt.svelte';
import { getBackend, type Backend } from './lib/backend';
import { applyTheme } from './state/settings.svelte';

async function pickBackend(): Promise<Backend> {
  if (!new URLSearchParams(location.search).has('mock')) return getBackend();
  const { demoBackend } = await import('./lib/demo');
  return demoBackend();
}

const backend = await pickBackend();
backend
  .getSettings()
  .then((s) => applyTheme(s.theme))
  .catch(() => {});
// The prompt may stay open (hidden) a while: it follows a theme chosen meanwhile.
void backend.on('SettingsChanged', (s) => applyTheme(s.theme)).catch(() => {});
// The app builds the prompt for a call (a notification or the tray named it): show that one first.
const call = new URLSearchParams(location.search).get('call') ?? undefined;
mount(Prompt, { target: document.getElementById('app')!, props: { backend, call } });

import './app.css';
import { mount } from 'svelte';
import Prompt from './components/Prompt.svelte';
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
// The prompt stays open (hidden) for the app's life: it follows a theme chosen meanwhile.
void backend.on('SettingsChanged', (s) => applyTheme(s.theme)).catch(() => {});
mount(Prompt, { target: document.getElementById('app')!, props: { backend } });
// Two frames: the first is scheduled before the paint, the second after it.
requestAnimationFrame(() => requestAnimationFrame(() => void backend.promptPainted().catch(() => {})));

import './app.css';
import { mount } from 'svelte';
import App from './components/App.svelte';
import { getBackend, type Backend } from './lib/backend';

// `?mock` runs the UI against in-memory demo data, in a plain browser.
async function pickBackend(): Promise<Backend> {
  if (!new URLSearchParams(location.search).has('mock')) return getBackend();
  const { demoBackend } = await import('./lib/demo');
  return demoBackend();
}

const backend = await pickBackend();
mount(App, { target: document.getElementById('app')!, props: { backend } });

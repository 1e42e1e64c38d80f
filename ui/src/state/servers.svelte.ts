// The servers tab: each upstream's state, its last stderr lines and its policy's health, and
// the form that adds or edits an `mcpServers` entry.

import { errorText, type Backend, type Unlisten } from '../lib/backend';
import { emptyForm, entryFromForm, formFromEntry, type ServerForm } from '../lib/server-entry';
import type { EntryProblem, ServerStatus } from '../lib/types';

export class ServersState {
  servers = $state<ServerStatus[]>([]);
  error = $state<string | null>(null);
  restarting = $state<string[]>([]);
  loaded = $state(false);

  /** The entry being added or edited, if the form is open. */
  form = $state<ServerForm | null>(null);
  /** Editing an entry already in the file (its name is fixed). */
  formExisting = $state(false);
  formProblems = $state<EntryProblem[]>([]);
  saving = $state(false);
  /** Shown after a save: what happened. */
  notice = $state<string | null>(null);

  private unlisten: Unlisten[] = [];
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private backend: Backend) {}

  async start(pollMs = 5000): Promise<void> {
    const refresh = () => void this.refresh();
    this.unlisten.push(await this.backend.on('PolicyReloaded', refresh), await this.backend.on('PolicyRejected', refresh));
    await this.refresh();
    if (pollMs > 0) this.timer = setInterval(refresh, pollMs);
  }

  stop(): void {
    this.unlisten.forEach((u) => u());
    this.unlisten = [];
    if (this.timer) clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    try {
      this.servers = await this.backend.listServers();
      this.error = null;
    } catch (e) {
      this.error = errorText(e);
    }
    this.loaded = true;
  }

  startAdd(): void {
    this.form = emptyForm();
    this.formExisting = false;
    this.formProblems = [];
    this.notice = null;
  }

  async startEdit(name: string): Promise<void> {
    this.notice = null;
    try {
      const entry = await this.backend.readServer(name);
      if (!entry) {
        this.error = `${name}: its entry in portcullis.json is neither a command nor a URL; edit the file by hand.`;
        return;
      }
      this.form = formFromEntry(name, entry);
      this.formExisting = true;
      this.formProblems = [];
    } catch (e) {
      this.error = errorText(e);
    }
  }

  cancelForm(): void {
    this.form = null;
    this.formProblems = [];
  }

  /** Checks the form, then has the app write and apply the entry. Returns whether it was saved. */
  async saveForm(): Promise<boolean> {
    if (!this.form || this.saving) return false;
    const { entry, problems } = entryFromForm(this.form);
    this.formProblems = problems;
    if (!entry) return false;
    const name = this.form.name.trim();
    this.saving = true;
    try {
      const refused = await this.backend.saveServer(name, entry);
      this.formProblems = refused;
      if (refused.length) return false;
      this.notice = `${name} saved to portcullis.json; new sessions use it now.`;
      this.form = null;
      this.error = null;
      await this.refresh();
      return true;
    } catch (e) {
      this.formProblems = [{ field: '', message: errorText(e) }];
      return false;
    } finally {
      this.saving = false;
    }
  }

  async restart(server: string): Promise<void> {
    if (this.restarting.includes(server)) return;
    this.restarting = [...this.restarting, server];
    try {
      await this.backend.restartServer(server);
      this.error = null;
    } catch (e) {
      this.error = `${server}: ${errorText(e)}`;
    } finally {
      this.restarting = this.restarting.filter((s) => s !== server);
    }
    await this.refresh();
  }
}

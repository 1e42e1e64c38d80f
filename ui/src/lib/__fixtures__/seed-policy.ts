// The seed policy of DESIGN §4 with a glob entry and hide patterns, shared by the model's tests
// (its explain answers are golden cases in policy-explain.json), and the form's view of a tool
// in it as the gateway decides it.
import { toolView, type PolicyDoc, type ToolView } from '../policy-model';
import { goldenExplain } from '../golden-explain';

export const SEED: PolicyDoc = {
  version: '1',
  default: 'deny',
  hide: ['delete_*', 'secret_tool'],
  approval_timeout: 45,
  tools: {
    vm_agent_exec_status: {},
    'pve_get_*_status': { rate_limit: { max: 10, window: 60 } },
    'pve_*': { action: 'require_approval' },
    vm_delete: { action: 'deny', reason: 'Deleting VMs is not allowed from agents' },
    vm_start: { action: 'require_approval', approval_timeout: 120 },
    execute_query: {
      action: 'require_approval',
      rules: [{ when: { 'arguments.query': { regex: '^\\s*SELECT\\b' } }, action: 'allow' }],
      class: 'execute',
    },
  },
};

/** What decides a tool is the gateway's answer (golden answers from the Rust explain). */
export const viewOf = (doc: PolicyDoc, tool: string): ToolView => toolView(doc, goldenExplain(JSON.stringify(doc), [tool]).tools[0]);

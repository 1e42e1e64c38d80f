import { describe, expect, it } from 'vitest';
import { elicitationView, isToolCall, KINDS, kindOf, samplingView, splitHost, targetLabel } from '../request-kind';
import { parseExact } from '../exact-json';

describe('request kinds', () => {
  it('names every method and what its tool field holds', () => {
    expect(KINDS.map((k) => k.method)).toHaveLength(7);
    expect(isToolCall(undefined)).toBe(true);
    expect(isToolCall('resources/read')).toBe(false);
    expect(kindOf('resources/read').tag).toBe('resource');
    expect(targetLabel('resources/subscribe')).toBe('URI');
    expect(targetLabel('prompts/get')).toBe('Prompt');
    expect(targetLabel('sampling/createMessage')).toBe('Request');
    expect(targetLabel('tools/call')).toBe('Tool');
  });

  it('splits the host off the words only when they start with it', () => {
    expect(splitHost({ text: 'a.example — s asks you to open https://a.example/', host: 'a.example' })).toEqual({
      host: 'a.example',
      rest: ' — s asks you to open https://a.example/',
    });
    expect(splitHost({ text: 'something else', host: 'a.example' })).toEqual({ host: null, rest: 'something else' });
  });

  it('reads a sampling request as text, with exact numbers and content lists', () => {
    const v = samplingView(
      parseExact(
        JSON.stringify({
          systemPrompt: 'Be brief',
          messages: [
            { role: 'user', content: { type: 'text', text: 'hi' } },
            { role: 'user', content: [{ type: 'image', data: 'AA' }, { type: 'text', text: 'and this' }] },
          ],
          maxTokens: 12345678901234567890,
          modelPreferences: { hints: [{ name: 'claude' }, {}] },
        }).replace('12345678901234567000', '12345678901234567890'),
      ),
    );
    expect(v).toEqual({
      system: 'Be brief',
      messages: [
        { role: 'user', text: 'hi' },
        { role: 'user', text: '[image]\nand this' },
      ],
      maxTokens: '12345678901234567890',
      hints: ['claude'],
    });
    expect(samplingView(null)).toEqual({ system: null, messages: [], maxTokens: null, hints: [] });
  });

  it('reads an elicitation as its message and its link or fields', () => {
    expect(elicitationView({ mode: 'url', url: 'https://x.example/', message: 'Go' })).toEqual({
      message: 'Go',
      url: 'https://x.example/',
      fields: [],
    });
    expect(
      elicitationView({
        message: 'Who?',
        requestedSchema: { required: ['name'], properties: { name: { type: 'string', title: 'Name' }, n: {} } },
      }),
    ).toEqual({
      message: 'Who?',
      url: null,
      fields: [
        { name: 'name', type: 'string', required: true, about: 'Name' },
        { name: 'n', type: 'any', required: false, about: null },
      ],
    });
  });
});

import { describe, expect, it } from 'vitest';
import { agentPathToFile, nameFolders } from '../../src/folders';

describe('workspace folders', () => {
  const two = nameFolders([
    { name: 'app', path: '/w/app' },
    { name: 'lib', path: '/w/lib' },
  ]);

  it('opens a path the agent names by folder in that folder', () => {
    expect(agentPathToFile('lib/util.py', two)).toBe('/w/lib/util.py');
    expect(agentPathToFile('app/src/main.py', two)).toBe('/w/app/src/main.py');
    expect(agentPathToFile('lib', two)).toBe('/w/lib');
    // A name that is no folder's is read in the first folder, as the server does.
    expect(agentPathToFile('src/x.py', two)).toBe('/w/app/src/x.py');
    expect(agentPathToFile('/etc/hosts', two)).toBe('/etc/hosts');
  });

  it('keeps a one-folder workspace as before: paths relative to it', () => {
    const one = nameFolders([{ name: 'lib', path: '/w/lib' }]);
    expect(agentPathToFile('lib/util.py', one)).toBe('/w/lib/lib/util.py');
    expect(agentPathToFile('x.py', [])).toBeUndefined();
  });

  it('names folders as the server does: unique, path-safe', () => {
    const named = nameFolders([
      { name: 'app', path: '/x/app' },
      { name: 'App', path: '/y/app' },
      { name: 'a/b', path: '/z/core' },
      { name: 'again', path: '/x/app' },
    ]);
    expect(named.map((f) => f.name)).toEqual(['app', 'App-2', 'core']);
  });
});

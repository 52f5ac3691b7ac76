import { ConfigError, loadConfig } from '../config.ts';

/**
 * The config of a process main. A bad or missing variable ends the process with the config's own
 * message, one line per variable, and no stack trace: there is nothing to debug but the setting.
 */
export function loadConfigOrExit() {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

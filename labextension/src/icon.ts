import { LabIcon } from '@jupyterlab/ui-components';

import agentToolsSvg from '../style/icons/agent-tools.svg';

/** The side panel's tab icon; its `jp-icon3` fill follows the theme, as JupyterLab's own do. */
export const agentToolsIcon = new LabIcon({
  name: 'jupyter-agent-tools:agent-tools',
  svgstr: agentToolsSvg
});

import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { IMainMenu } from '@jupyterlab/mainmenu';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IStatusBar } from '@jupyterlab/statusbar';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';
import { Widget } from '@lumino/widgets';

import { AgentToolsClient } from './api/client';
import { agentToolsIcon } from './icon';
import { AgentToolsModel } from './model';
import { CommandIds, IAgentTools, PANEL_ID } from './tokens';
import { AgentToolsPanel, CellOpener } from './widgets/panel';

export { CommandIds, IAgentTools, PANEL_ID } from './tokens';

const DOMAIN = 'jupyter-agent-tools';

/** The shared state: the lab's space and those of open notebooks, their cards, the runs. */
const modelPlugin: JupyterFrontEndPlugin<IAgentTools> = {
  id: 'jupyter-agent-tools:model',
  description: 'Joins the lab and open notebooks as a human front end of agent-tools.',
  autoStart: true,
  provides: IAgentTools,
  optional: [INotebookTracker],
  activate: (app: JupyterFrontEnd, notebooks: INotebookTracker | null): IAgentTools => {
    const model = new AgentToolsModel(new AgentToolsClient(app.serviceManager.serverSettings));
    if (notebooks) {
      // A notebook's space is its path, as open_panel() in its kernel names it.
      const sync = () => {
        const paths: string[] = [];
        notebooks.forEach(panel => paths.push(panel.context.path));
        model.setNotebookSpaces(paths);
      };
      notebooks.widgetAdded.connect((_, panel) => {
        panel.context.pathChanged.connect(sync);
        panel.disposed.connect(() => setTimeout(sync));
        sync();
      });
    }
    return model;
  }
};

/** The side panel, its command (palette, View menu) and its place in the restored layout. */
const panelPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-agent-tools:panel',
  description: 'The Agent Tools side panel.',
  autoStart: true,
  requires: [IAgentTools],
  optional: [ITranslator, ICommandPalette, IMainMenu, ILayoutRestorer, IEditorLanguageRegistry],
  activate: (
    app: JupyterFrontEnd,
    model: IAgentTools,
    translator: ITranslator | null,
    palette: ICommandPalette | null,
    mainMenu: IMainMenu | null,
    restorer: ILayoutRestorer | null,
    languages: IEditorLanguageRegistry | null
  ) => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    // Diffs are highlighted as the editor would highlight the file.
    const highlighter = languages
      ? (code: string, path: string, el: HTMLElement) =>
          languages.highlight(code, languages.findByFileName(path), el)
      : null;
    const openCell: CellOpener = (path, cellId, cellNumber) => openNotebookCell(app, path, cellId, cellNumber);
    const panel = new AgentToolsPanel(model, trans, highlighter, openCell);
    // An icon tab among the sidebar's icon tabs; the name is its caption (hover).
    panel.title.icon = agentToolsIcon;
    app.shell.add(panel, 'right', { rank: 600 });
    restorer?.add(panel, PANEL_ID);

    app.commands.addCommand(CommandIds.openPanel, {
      label: trans.__('Open Agent Tools Panel'),
      caption: trans.__('Questions, permission prompts, staged edits and runs of agents'),
      execute: () => app.shell.activateById(panel.id)
    });
    app.commands.addCommand(CommandIds.refresh, {
      label: trans.__('Refresh Agent Tools'),
      execute: () => model.refresh()
    });
    palette?.addItem({ command: CommandIds.openPanel, category: trans.__('Agent Tools') });
    mainMenu?.viewMenu.addGroup([{ command: CommandIds.openPanel }], 100);
  }
};

/**
 * Open a notebook and make one of its cells active, scrolled into view: the cell with id
 * `cellId` (found in the notebook's model, so a cell moved since is still found), else the
 * cell numbered `cellNumber` (from 1).
 */
async function openNotebookCell(
  app: JupyterFrontEnd,
  path: string,
  cellId: string | null,
  cellNumber: number | null
): Promise<void> {
  const widget: unknown = await app.commands.execute('docmanager:open', { path, factory: 'Notebook' });
  if (!(widget instanceof NotebookPanel)) {
    return;
  }
  await widget.context.ready;
  const notebook = widget.content;
  const cells = notebook.model?.cells;
  let index = -1;
  if (cellId && cells) {
    for (let i = 0; i < cells.length; i++) {
      if (cells.get(i).id === cellId) {
        index = i;
        break;
      }
    }
  }
  if (index < 0 && cellNumber !== null) {
    index = cellNumber - 1;
  }
  const cell = notebook.widgets[index];
  if (!cell) {
    return;
  }
  notebook.activeCellIndex = index;
  await notebook.scrollToCell(cell, 'center');
}

/** A status-bar item with the number of pending cards; a click opens the panel. */
const statusBarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-agent-tools:status-bar',
  description: 'The number of pending agent questions in the status bar.',
  autoStart: true,
  requires: [IAgentTools],
  optional: [IStatusBar, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: IAgentTools,
    statusBar: IStatusBar | null,
    translator: ITranslator | null
  ) => {
    if (!statusBar) {
      return;
    }
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const item = new Widget();
    item.addClass('jp-AgentTools-statusItemCount');
    item.node.title = trans.__('Pending agent questions: click to open the Agent Tools panel');
    item.node.onclick = () => void app.commands.execute(CommandIds.openPanel);
    const render = () => {
      const count = model.cards.count;
      item.node.textContent = trans._n('Agent: %1 question', 'Agent: %1 questions', count);
      item.toggleClass('jp-mod-pending', count > 0);
    };
    model.changed.connect(render);
    render();
    statusBar.registerStatusItem('jupyter-agent-tools:pending', {
      item,
      align: 'left',
      rank: 900,
      isActive: () => true
    });
  }
};

/** A notification when a card arrives while the panel is not visible, with an "Open" action. */
const notificationsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-agent-tools:notifications',
  description: 'Notifies about agent questions while the Agent Tools panel is closed.',
  autoStart: true,
  requires: [IAgentTools],
  optional: [ITranslator],
  activate: (
    app: JupyterFrontEnd,
    model: IAgentTools,
    translator: ITranslator | null
  ) => {
    const trans = (translator ?? nullTranslator).load(DOMAIN);
    const shown = new Map<string, string>(); // card id -> notification id
    model.cardAdded.connect((_, card) => {
      const panel = Array.from(app.shell.widgets('right')).find(w => w.id === PANEL_ID);
      if (panel?.isVisible) {
        return;
      }
      const message =
        card.kind === 'permission'
          ? trans.__('An agent asks to run %1', card.label ?? card.tool ?? '')
          : trans.__('An agent asks: %1', card.question);
      const id = Notification.info(message, {
        autoClose: false,
        actions: [
          {
            label: trans.__('Open'),
            caption: trans.__('Open the Agent Tools panel'),
            callback: () => void app.commands.execute(CommandIds.openPanel)
          }
        ]
      });
      shown.set(card.id, id);
    });
    model.cardRemoved.connect((_, card) => {
      const id = shown.get(card.id);
      if (id) {
        Notification.dismiss(id);
        shown.delete(card.id);
      }
    });
  }
};

export default [modelPlugin, panelPlugin, statusBarPlugin, notificationsPlugin];
